import Foundation

extension UploadRequest {
    /// A body to upload, as Alamofire names the three kinds: bytes in memory, a file, or a stream.
    ///
    /// Use it with `Session.upload(_:with:)` or return it from an ``UploadableConvertible`` of
    /// your own. Courier turns it into a ``RequestBody``: `.data` and `.file` are resent whole on
    /// a retry; a `.stream` can be read once, so its request is never retried (pass a
    /// ``RequestBody/stream(length:_:)`` that opens a new stream per attempt to allow retries).
    public enum Uploadable: @unchecked Sendable {
        // `@unchecked Sendable`: an `InputStream` is not `Sendable`; one upload reads it on one
        // attempt only, never from two threads at once. Give a stream to one upload only.

        /// Bytes in memory.
        case data(Data)
        /// The file at a `file:` URL, read in chunks as it is sent; with `shouldRemove`, the
        /// request's `fileManager` removes it when the request finishes.
        case file(URL, shouldRemove: Bool)
        /// A stream, read once as the body is sent (chunked: its length is unknown).
        case stream(InputStream)

        /// The body Courier sends, and the file to remove when the request finishes; a file that
        /// may be removed but cannot be read is removed at once, with `fileManager`.
        func madeBody(removingWith fileManager: FileManager) throws -> MadeBody {
            switch self {
            case .data(let data):
                return MadeBody(body: .data(data), temporaryFile: nil)
            case .file(let url, let shouldRemove):
                do {
                    return MadeBody(body: try .file(url), temporaryFile: shouldRemove ? url : nil)
                } catch {
                    if shouldRemove { try? fileManager.removeItem(at: url) }
                    throw error
                }
            case .stream(let stream):
                return MadeBody(body: .stream(readingOnce: stream), temporaryFile: nil)
            }
        }
    }
}

/// A type that makes the body of an upload: Alamofire's hook for bodies that are costly to make
/// (written to a file, say). Courier calls ``createUploadable()`` once, before the first attempt
/// and off the caller's thread for the slow kinds; an error it throws fails the request with
/// ``CourierError/Kind/createUploadableFailed`` (a ``CourierError`` it throws is kept as it is).
public protocol UploadableConvertible: Sendable {
    /// Makes the body to send.
    func createUploadable() throws -> UploadRequest.Uploadable
}

extension UploadRequest.Uploadable: UploadableConvertible {
    /// The body itself.
    public func createUploadable() throws -> UploadRequest.Uploadable { self }
}

/// A type that builds both the request and its body, for `Session.upload(_:interceptor:)`.
public protocol UploadConvertible: UploadableConvertible, URLRequestConvertible {}
