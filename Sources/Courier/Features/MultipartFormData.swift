import Foundation

/// A `multipart/form-data` body (RFC 7578) built from data, files and streams: what a browser sends
/// for a form with file fields.
///
/// Append parts in the order they should be sent, then encode the form: ``encode()`` in memory, or
/// ``writeEncodedData(to:)`` to a file in fixed-size chunks, for forms too large for memory.
/// ``contentLength`` is exact and known before anything is read, so the caller can choose between the two
/// by comparing it with ``encodingMemoryThreshold``.
///
/// ```swift
/// let form = MultipartFormData()
/// form.append(Data("Ada".utf8), withName: "name")
/// form.append(photoURL, withName: "photo")            // filename="photo.jpg", Content-Type: image/jpeg
/// let body = try form.encode()                         // send with Content-Type: form.contentType
/// ```
///
/// The `append` methods do not throw: a part that cannot be added (a missing file, a name holding CR or
/// LF…) is left out, and the first such failure is thrown by ``encode()`` and ``writeEncodedData(to:)``
/// as a ``CourierError`` of kind ``CourierError/Kind/multipartEncodingFailed``. A file's size is read when
/// it is appended and its bytes when the form is encoded. A stream is read when the form is encoded, and
/// can be read only once, so encode a form holding streams only once.
public final class MultipartFormData: @unchecked Sendable {
    // `@unchecked Sendable`: the only mutable state, `state`, sits behind one lock (`Protected`);
    // `boundary` and `fileManager` never change.

    /// The size, in bytes, under which a session encodes a form in memory; a larger form is written
    /// to a temporary file first and uploaded from there (10 MB).
    public static let encodingMemoryThreshold: UInt64 = 10_000_000

    /// The string that separates the parts, e.g. `courier.boundary.3f9a1c0d5e7b2468`.
    public let boundary: String

    /// The value for the request's `Content-Type` header: `multipart/form-data; boundary=…`.
    ///
    /// The boundary is quoted when it holds a character a token cannot, such as a space or `/`.
    /// Set it to send another type with the same boundary (`multipart/mixed`, or added
    /// parameters); what you set is sent as it is, so it must name ``boundary``.
    public var contentType: String {
        get {
            if let chosen = state.withLock({ $0.contentType }) { return chosen }
            let isToken = boundary.utf8.allSatisfy(HTTPMethod.isTokenCharacter)
            return "multipart/form-data; boundary=\(isToken ? boundary : "\"\(boundary)\"")"
        }
        set { state.withLock { $0.contentType = newValue } }
    }

    /// The exact size of the encoded form in bytes, computed from the parts' lengths without reading
    /// any file or stream. Parts that could not be appended are not counted.
    public var contentLength: UInt64 {
        state.withLock { state in
            // Each part counts a leading `\r\n--boundary\r\n`, which the first part writes without its CRLF;
            // the final `\r\n--boundary--\r\n` is 2 longer than that, so it adds the boundary and 6 more
            // (with no parts, just `--boundary--\r\n`: the same).
            state.parts.reduce(UInt64(boundary.utf8.count + 6)) { total, part in
                total.saturatingAdd(part.encodedLength(boundary: boundary))
            }
        }
    }

    /// The size of each piece read from a file or a stream while encoding (1 MiB).
    static let chunkSize = 1 << 20

    private let fileManager: FileManager
    private let state: Protected<State>

    private struct State {
        var parts: [BodyPart] = []
        /// The first failure of an `append`, thrown when the form is encoded.
        var firstError: EncodingError?
        /// The `Content-Type` set in place of the one made from the boundary.
        var contentType: String?
    }

    private struct BodyPart {
        enum Body {
            case data(Data)
            case file(URL)
            case stream(InputStream)
        }

        /// The header lines, each ending in CRLF, and the empty line that ends them.
        let headers: Data
        let body: Body
        let bodyLength: UInt64

        /// The part with a leading `\r\n--boundary\r\n`.
        func encodedLength(boundary: String) -> UInt64 {
            UInt64(boundary.utf8.count + 6 + headers.count).saturatingAdd(bodyLength)
        }
    }

    /// Creates an empty form.
    ///
    /// - Parameters:
    ///   - fileManager: Checks appended files and reads their sizes; `.default` unless you need another.
    ///   - boundary: The boundary between parts; by default `courier.boundary.` and 16 random hex digits.
    ///     A boundary you choose must be 1 to 70 characters from RFC 2046's set (letters, digits, space and
    ///     `'()+_,-./:=?`, not ending in a space) and must not occur in any part; an invalid one makes
    ///     encoding fail.
    public init(fileManager: FileManager = .default, boundary: String? = nil) {
        self.fileManager = fileManager
        let boundary = boundary ?? Self.randomBoundary()
        self.boundary = boundary
        self.state = Protected(State(firstError: Self.boundaryError(boundary)))
    }

    // MARK: - Appending parts

    /// Appends a part holding `data`, e.g. a text field (`fileName` and `mimeType` left out) or a file
    /// already in memory.
    ///
    /// - Parameters:
    ///   - data: The part's content.
    ///   - name: The form field name, sent as `Content-Disposition: form-data; name="…"`.
    ///   - fileName: The file name sent as `filename="…"`, or `nil` for a plain field.
    ///   - mimeType: The part's `Content-Type`, or `nil` to send none.
    public func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        appendPart(name: name, fileName: fileName, mimeType: mimeType, body: .data(data), length: UInt64(data.count))
    }

    /// Appends the file at `fileURL`, named after its last path component, with the MIME type its extension
    /// suggests (`application/octet-stream` for an unknown one).
    ///
    /// The file is read when the form is encoded, so it must still be there, unchanged, by then.
    ///
    /// - Parameters:
    ///   - fileURL: A `file:` URL of a regular, readable file.
    ///   - name: The form field name.
    public func append(_ fileURL: URL, withName name: String) {
        append(
            fileURL,
            withName: name,
            fileName: fileURL.lastPathComponent,
            mimeType: Self.mimeType(forPathExtension: fileURL.pathExtension)
        )
    }

    /// Appends the file at `fileURL` under the file name and MIME type you give.
    ///
    /// The file is read when the form is encoded, so it must still be there, unchanged, by then.
    ///
    /// - Parameters:
    ///   - fileURL: A `file:` URL of a regular, readable file.
    ///   - name: The form field name.
    ///   - fileName: The file name sent as `filename="…"`.
    ///   - mimeType: The part's `Content-Type`.
    public func append(_ fileURL: URL, withName name: String, fileName: String, mimeType: String) {
        let length: UInt64
        do {
            length = try regularFileSize(fileURL)
        } catch {
            record(error)
            return
        }
        appendPart(name: name, fileName: fileName, mimeType: mimeType, body: .file(fileURL), length: length)
    }

    /// Appends `length` bytes read from `stream` when the form is encoded, as a file part.
    ///
    /// The stream is opened (if it is not open yet), read and closed by the encoding; bytes past
    /// `length` are not read. A stream that ends early makes encoding fail.
    ///
    /// - Parameters:
    ///   - stream: The content; read once.
    ///   - length: How many bytes the part holds.
    ///   - name: The form field name.
    ///   - fileName: The file name sent as `filename="…"`.
    ///   - mimeType: The part's `Content-Type`.
    public func append(
        _ stream: InputStream,
        withLength length: UInt64,
        name: String,
        fileName: String,
        mimeType: String
    ) {
        appendPart(name: name, fileName: fileName, mimeType: mimeType, body: .stream(stream), length: length)
    }

    /// Appends `length` bytes read from `stream` when the form is encoded, under part headers you
    /// write yourself (at least a `Content-Disposition`).
    ///
    /// The stream is opened (if it is not open yet), read and closed by the encoding; bytes past
    /// `length` are not read. A stream that ends early makes encoding fail.
    ///
    /// - Parameters:
    ///   - stream: The content; read once.
    ///   - length: How many bytes the part holds.
    ///   - headers: The part's headers, sent in order; a name that is not a token, or a value holding
    ///     CR, LF or NUL, makes encoding fail.
    public func append(_ stream: InputStream, withLength length: UInt64, headers: HTTPHeaders) {
        appendPart(headers: headers, body: .stream(stream), length: length)
    }

    // MARK: - Encoding

    /// The whole encoded form, in memory.
    ///
    /// Files and streams are read here. For a form larger than ``encodingMemoryThreshold``, prefer
    /// ``writeEncodedData(to:)``.
    ///
    /// - Throws: A ``CourierError`` of kind ``CourierError/Kind/multipartEncodingFailed`` whose
    ///   ``CourierError/underlyingError`` is an ``EncodingError``, when a part could not be appended or read.
    public func encode() throws -> Data {
        let parts = try partsToEncode()
        var encoded = Data()
        do {
            try write(parts) { encoded.append($0) }
        } catch {
            throw Self.courierError(error)
        }
        return encoded
    }

    /// Writes the encoded form to a new file at `fileURL`, reading files and streams in fixed-size chunks
    /// so no part is ever held in memory whole.
    ///
    /// - Parameter fileURL: A `file:` URL where no file exists yet.
    /// - Throws: A ``CourierError`` of kind ``CourierError/Kind/multipartEncodingFailed`` whose
    ///   ``CourierError/underlyingError`` is an ``EncodingError``: when a part could not be appended or read,
    ///   when the file already exists, or when it cannot be written. What was written is removed.
    public func writeEncodedData(to fileURL: URL) throws {
        let parts = try partsToEncode()
        guard fileURL.isFileURL else { throw Self.courierError(EncodingError.invalidFileURL(fileURL)) }
        guard !fileManager.fileExists(atPath: fileURL.path) else {
            throw Self.courierError(EncodingError.outputFileExists(fileURL))
        }
        do {
            try Data().write(to: fileURL, options: .withoutOverwriting)
        } catch {
            // Created by someone else in between: not ours to remove.
            let exists = fileManager.fileExists(atPath: fileURL.path)
            throw Self.courierError(
                exists ? EncodingError.outputFileExists(fileURL) : EncodingError.outputFileWriteFailed(fileURL, error)
            )
        }
        do {
            let handle: FileHandle
            do {
                handle = try FileHandle(forWritingTo: fileURL)
            } catch {
                throw EncodingError.outputFileWriteFailed(fileURL, error)
            }
            defer { try? handle.close() }
            try write(parts) { chunk in
                do {
                    try handle.write(contentsOf: chunk)
                } catch {
                    throw EncodingError.outputFileWriteFailed(fileURL, error)
                }
            }
        } catch {
            try? fileManager.removeItem(at: fileURL)
            throw Self.courierError(error)
        }
    }

    // MARK: - Private

    private func record(_ error: EncodingError) {
        state.withLock { state in
            if state.firstError == nil { state.firstError = error }
        }
    }

    private func appendPart(name: String, fileName: String?, mimeType: String?, body: BodyPart.Body, length: UInt64) {
        var disposition: String
        do {
            disposition = "form-data; name=\(try Self.quoted(name, field: "name"))"
            if let fileName { disposition += "; filename=\(try Self.quoted(fileName, field: "filename"))" }
        } catch {
            record(error)
            return
        }
        var headers: HTTPHeaders = [.contentDisposition(disposition)]
        if let mimeType { headers.add(.contentType(mimeType)) }
        appendPart(headers: headers, body: body, length: length)
    }

    private func appendPart(headers: HTTPHeaders, body: BodyPart.Body, length: UInt64) {
        if let (header, reason) = headers.firstInvalidity {
            record(EncodingError.invalidHeader(field: header.name, reason: reason))
            return
        }
        var lines = headers.map { "\($0.name): \($0.value)\r\n" }.joined()
        lines += "\r\n"
        let part = BodyPart(headers: Data(lines.utf8), body: body, bodyLength: length)
        state.withLock { $0.parts.append(part) }
    }

    /// `value` as a quoted string: `"` and `\` escaped with a backslash. CR, LF and NUL cannot be sent.
    private static func quoted(_ value: String, field: String) throws(EncodingError) -> String {
        guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
            throw EncodingError.invalidHeader(
                field: "Content-Disposition",
                reason: "the \(field) contains CR, LF or NUL"  // Never the value: it may be private.
            )
        }
        var quoted = "\""
        for scalar in value.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(scalar)
        }
        quoted += "\""
        return quoted
    }

    /// The size of the regular file at `url`, after checking that it can be a part.
    private func regularFileSize(_ url: URL) throws(EncodingError) -> UInt64 {
        guard url.isFileURL else { throw .invalidFileURL(url) }
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else { throw .fileNotFound(url) }
        guard !isDirectory.boolValue else { throw .notARegularFile(url, isDirectory: true) }
        guard fileManager.isReadableFile(atPath: url.path) else { throw .fileNotReadable(url) }
        let attributes: [FileAttributeKey: Any]
        do {
            // Follow symbolic links: the part holds what the link points at.
            attributes = try fileManager.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
        } catch {
            throw .fileNotReadable(url, error)
        }
        guard Self.isRegularFile(attributes[.type]) else { throw .notARegularFile(url, isDirectory: false) }
        guard let size = Self.unsignedSize(attributes[.size]) else { throw .fileNotReadable(url) }
        return size
    }

    private static func isRegularFile(_ type: Any?) -> Bool {
        if let type = type as? FileAttributeType { return type == .typeRegular }
        if let type = type as? String { return FileAttributeType(rawValue: type) == .typeRegular }
        return false
    }

    private static func unsignedSize(_ size: Any?) -> UInt64? {
        switch size {
        case let size as UInt64: return size
        case let size as Int: return UInt64(exactly: size)
        case let size as NSNumber: return size.int64Value >= 0 ? size.uint64Value : nil
        default: return nil
        }
    }

    /// The parts, or the first failure of an `append`.
    private func partsToEncode() throws -> [BodyPart] {
        let (parts, error) = state.withLock { ($0.parts, $0.firstError) }
        if let error { throw Self.courierError(error) }
        return parts
    }

    /// Hands the encoded form to `sink` piece by piece, no piece longer than ``chunkSize`` except a
    /// data part's own `Data`.
    private func write(_ parts: [BodyPart], to sink: (Data) throws -> Void) throws {
        for (index, part) in parts.enumerated() {
            let delimiter = index == 0 ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n"
            try sink(Data(delimiter.utf8) + part.headers)
            switch part.body {
            case .data(let data):
                try sink(data)
            case .file(let url):
                try copyFile(url, length: part.bodyLength, to: sink)
            case .stream(let stream):
                try Self.copyStream(stream, length: part.bodyLength, to: sink)
            }
        }
        try sink(Data((parts.isEmpty ? "--\(boundary)--\r\n" : "\r\n--\(boundary)--\r\n").utf8))
    }

    private func copyFile(_ url: URL, length: UInt64, to sink: (Data) throws -> Void) throws {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw fileManager.fileExists(atPath: url.path)
                ? EncodingError.fileNotReadable(url, error) : EncodingError.fileNotFound(url)
        }
        defer { try? handle.close() }
        var remaining = length
        while remaining > 0 {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: Int(min(remaining, UInt64(Self.chunkSize)))) ?? Data()
            } catch {
                throw EncodingError.fileNotReadable(url, error)
            }
            guard !chunk.isEmpty, UInt64(chunk.count) <= remaining else {
                throw EncodingError.fileChanged(url, expected: length)
            }
            try sink(chunk)
            remaining -= UInt64(chunk.count)
        }
        // A file that grew would no longer match `contentLength`.
        if let extra = try? handle.read(upToCount: 1), !extra.isEmpty {
            throw EncodingError.fileChanged(url, expected: length)
        }
    }

    private static func copyStream(_ stream: InputStream, length: UInt64, to sink: (Data) throws -> Void) throws {
        switch stream.streamStatus {
        case .notOpen: stream.open()
        case .closed: throw EncodingError.streamClosed
        default: break
        }
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: Int(min(length, UInt64(chunkSize))))
        var received: UInt64 = 0
        while received < length {
            guard stream.streamStatus != .error else { throw EncodingError.streamReadFailed(error(of: stream)) }
            let wanted = Int(min(length - received, UInt64(buffer.count)))
            let count = buffer.withUnsafeMutableBufferPointer { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return stream.read(base, maxLength: wanted)
            }
            guard count >= 0, count <= wanted else { throw EncodingError.streamReadFailed(error(of: stream)) }
            guard count > 0 else { throw EncodingError.streamTooShort(expected: length, received: received) }
            try sink(Data(buffer[0..<count]))
            received += UInt64(count)
        }
    }

    /// The stream's error, read only when it reports one: FoundationNetworking's `streamError` traps
    /// when there is none.
    private static func error(of stream: InputStream) -> (any Error)? {
        stream.streamStatus == .error ? stream.streamError : nil
    }

    private static func courierError(_ error: any Error) -> CourierError {
        error as? CourierError ?? CourierError.multipartEncodingFailed(error)
    }

    private static func randomBoundary() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return "courier.boundary." + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Why `boundary` cannot be used (RFC 2046, section 5.1.1), or `nil` if it can.
    private static func boundaryError(_ boundary: String) -> EncodingError? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'()+_,-./:=? ".utf8)
        guard (1...70).contains(boundary.utf8.count), boundary.utf8.allSatisfy(allowed.contains),
            boundary.utf8.last != UInt8(ascii: " ")
        else {
            return EncodingError.invalidHeader(
                field: "boundary",
                reason: "\(boundary.debugDescription) is not 1 to 70 of RFC 2046's characters"
            )
        }
        return nil
    }
}

extension UInt64 {
    fileprivate func saturatingAdd(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
