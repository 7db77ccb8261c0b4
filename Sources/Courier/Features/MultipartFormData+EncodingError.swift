import Foundation

extension MultipartFormData {
    /// Why a ``MultipartFormData`` could not be encoded. It reaches the caller inside
    /// ``CourierError/Kind/multipartEncodingFailed``, as the error's ``CourierError/underlyingError``.
    ///
    /// Compare ``kind`` with the static members (`(error.underlyingError as? MultipartFormData.EncodingError)?.kind
    /// == .fileNotFound`); ``description`` says what happened in words and names the file. A struct rather
    /// than an enum so new reasons can be added without breaking a `switch` in your code.
    public struct EncodingError: Error, Sendable, CustomStringConvertible, LocalizedError {
        /// A family of encoding failures. Its ``description`` is a fixed short name, safe for logs and
        /// metric labels.
        public struct Kind: Hashable, Sendable, CustomStringConvertible {
            /// The short name, e.g. `fileNotFound`.
            public let description: String

            private init(_ description: String) {
                self.description = description
            }

            /// A file part's URL, or the URL given to ``MultipartFormData/writeEncodedData(to:)``, is not a
            /// `file:` URL.
            public static let invalidFileURL = Kind("invalidFileURL")
            /// A file part's file does not exist.
            public static let fileNotFound = Kind("fileNotFound")
            /// A file part's URL names a directory, or something else that is not a regular file.
            public static let notARegularFile = Kind("notARegularFile")
            /// A file part's file cannot be read, or its size cannot be found.
            public static let fileNotReadable = Kind("fileNotReadable")
            /// A file part's file changed size between ``MultipartFormData/append(_:withName:)`` and encoding.
            public static let fileChanged = Kind("fileChanged")
            /// A stream part's stream ended before its declared length.
            public static let streamTooShort = Kind("streamTooShort")
            /// A stream part's stream failed to open or to read, or was already closed (a stream can be
            /// read only once).
            public static let streamReadFailed = Kind("streamReadFailed")
            /// A name, file name, MIME type, header or the boundary holds characters that cannot be sent
            /// in a part header (CR, LF or NUL), or the boundary is not valid.
            public static let invalidHeader = Kind("invalidHeader")
            /// ``MultipartFormData/writeEncodedData(to:)`` was given a file that already exists.
            public static let outputFileExists = Kind("outputFileExists")
            /// ``MultipartFormData/writeEncodedData(to:)`` could not create or write its file.
            public static let outputFileWriteFailed = Kind("outputFileWriteFailed")
        }

        private enum Reason: Sendable {
            case invalidFileURL(URL)
            case fileNotFound(URL)
            case notARegularFile(URL, isDirectory: Bool)
            case fileNotReadable(URL, (any Error)?)
            case fileChanged(URL, expected: UInt64)
            case streamTooShort(expected: UInt64, received: UInt64)
            case streamReadFailed((any Error)?)
            case streamClosed
            case invalidHeader(field: String, reason: String)
            case outputFileExists(URL)
            case outputFileWriteFailed(URL, (any Error)?)
        }

        private let reason: Reason

        private init(_ reason: Reason) {
            self.reason = reason
        }

        static func invalidFileURL(_ url: URL) -> EncodingError { EncodingError(.invalidFileURL(url)) }
        static func fileNotFound(_ url: URL) -> EncodingError { EncodingError(.fileNotFound(url)) }
        static func notARegularFile(_ url: URL, isDirectory: Bool) -> EncodingError {
            EncodingError(.notARegularFile(url, isDirectory: isDirectory))
        }
        static func fileNotReadable(_ url: URL, _ error: (any Error)? = nil) -> EncodingError {
            EncodingError(.fileNotReadable(url, error))
        }
        static func fileChanged(_ url: URL, expected: UInt64) -> EncodingError {
            EncodingError(.fileChanged(url, expected: expected))
        }
        static func streamTooShort(expected: UInt64, received: UInt64) -> EncodingError {
            EncodingError(.streamTooShort(expected: expected, received: received))
        }
        static func streamReadFailed(_ error: (any Error)?) -> EncodingError { EncodingError(.streamReadFailed(error)) }
        static let streamClosed = EncodingError(.streamClosed)
        static func invalidHeader(field: String, reason: String) -> EncodingError {
            EncodingError(.invalidHeader(field: field, reason: reason))
        }
        static func outputFileExists(_ url: URL) -> EncodingError { EncodingError(.outputFileExists(url)) }
        static func outputFileWriteFailed(_ url: URL, _ error: (any Error)?) -> EncodingError {
            EncodingError(.outputFileWriteFailed(url, error))
        }

        /// The family of the failure.
        public var kind: Kind {
            switch reason {
            case .invalidFileURL: return .invalidFileURL
            case .fileNotFound: return .fileNotFound
            case .notARegularFile: return .notARegularFile
            case .fileNotReadable: return .fileNotReadable
            case .fileChanged: return .fileChanged
            case .streamTooShort: return .streamTooShort
            case .streamReadFailed, .streamClosed: return .streamReadFailed
            case .invalidHeader: return .invalidHeader
            case .outputFileExists: return .outputFileExists
            case .outputFileWriteFailed: return .outputFileWriteFailed
            }
        }

        /// The file the failure concerns: a file part's file, or the file being written; `nil` for
        /// stream and header failures.
        public var fileURL: URL? {
            switch reason {
            case .invalidFileURL(let url), .fileNotFound(let url), .notARegularFile(let url, _),
                .fileNotReadable(let url, _), .fileChanged(let url, _), .outputFileExists(let url),
                .outputFileWriteFailed(let url, _):
                return url
            case .streamTooShort, .streamReadFailed, .streamClosed, .invalidHeader:
                return nil
            }
        }

        /// The error underneath, if any: what the file system or the stream reported.
        public var underlyingError: (any Error)? {
            switch reason {
            case .fileNotReadable(_, let error), .streamReadFailed(let error), .outputFileWriteFailed(_, let error):
                return error
            case .invalidFileURL, .fileNotFound, .notARegularFile, .fileChanged, .streamTooShort, .streamClosed,
                .invalidHeader, .outputFileExists:
                return nil
            }
        }

        /// What went wrong, naming the file when there is one.
        public var description: String {
            switch reason {
            case .invalidFileURL(let url):
                return "The URL \(url.absoluteString) is not a file URL."
            case .fileNotFound(let url):
                return "The file \(url.path) does not exist."
            case .notARegularFile(let url, let isDirectory):
                return
                    "\(url.path) is \(isDirectory ? "a directory" : "not a regular file"), so it cannot be a file part."
            case .fileNotReadable(let url, let error):
                return "The file \(url.path) cannot be read\(Self.cause(error))"
            case .fileChanged(let url, let expected):
                return "The file \(url.path) is no longer \(expected) bytes long, as it was when it was appended."
            case .streamTooShort(let expected, let received):
                return "A stream part ended after \(received) of its declared \(expected) bytes."
            case .streamReadFailed(let error):
                return "A stream part could not be read\(Self.cause(error))"
            case .streamClosed:
                return "A stream part's stream is closed: a stream can be read only once, so encode a form only once."
            case .invalidHeader(let field, let reason):
                return "The part header \(field) cannot be sent: \(reason)."
            case .outputFileExists(let url):
                return "The file \(url.path) already exists; the encoded form is only written to a new file."
            case .outputFileWriteFailed(let url, let error):
                return "The encoded form could not be written to \(url.path)\(Self.cause(error))"
            }
        }

        /// The same as ``description``.
        public var errorDescription: String? { description }

        private static func cause(_ error: (any Error)?) -> String {
            error.map { ": \($0.localizedDescription)" } ?? "."
        }
    }
}
