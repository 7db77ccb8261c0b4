import Foundation

/// A request body that a transport reads as it sends: bytes in memory, a file, or a stream.
///
/// File and stream bodies are read in chunks, never loaded whole, and each attempt opens them
/// afresh, so a retried upload sends its body again from the start. Transports receive one with
/// ``Transport/makeTask(for:body:eventHandler:)-(RequestHead,_,_)``; you meet it when you write a transport, or
/// when you upload one with `Session.upload(_:to:)`.
public struct RequestBody: Sendable {
    enum Source: Sendable {
        case data(Data)
        case file(URL)
        case stream(@Sendable () throws -> InputStream)
        case oneShotStream(OneShotStream)
    }

    let source: Source
    /// The body's length in bytes, or `nil` when unknown (the body is then sent chunked).
    public let length: Int64?

    private init(source: Source, length: Int64?) {
        self.source = source
        self.length = length
    }

    /// Bytes held in memory.
    public static func data(_ data: Data) -> RequestBody {
        RequestBody(source: .data(data), length: Int64(data.count))
    }

    /// The contents of the file at `fileURL`, read in chunks as they are sent.
    ///
    /// - Throws: ``CourierError/Kind/createUploadableFailed`` when `fileURL` is not a local file,
    ///   does not exist, is a directory, or cannot be read.
    public static func file(_ fileURL: URL) throws -> RequestBody {
        RequestBody(source: .file(fileURL), length: try FileBodyCheck.readableFileSize(at: fileURL))
    }

    /// The bytes of a stream that `makeStream` opens; it is called once per attempt, so retries
    /// and redirects that resend the body start over. With `length`, the body is sent with a
    /// `Content-Length` (on both transports); without, chunked.
    public static func stream(
        length: Int64? = nil,
        _ makeStream: @escaping @Sendable () throws -> InputStream
    ) -> RequestBody {
        RequestBody(source: .stream(makeStream), length: length)
    }

    /// The bytes of `stream`, which can be read only once: a request with this body is not
    /// retried, and a `307`/`308` (which must resend it) is its response, not followed.
    public static func stream(readingOnce stream: InputStream, length: Int64? = nil) -> RequestBody {
        RequestBody(source: .oneShotStream(OneShotStream(stream)), length: length)
    }

    /// The bytes, when the body is in memory.
    public var data: Data? {
        if case .data(let data) = source { return data }
        return nil
    }

    /// The file, when the body is one.
    public var fileURL: URL? {
        if case .file(let url) = source { return url }
        return nil
    }

    /// Whether the body can be sent again (for a retry): all can but a single-use stream.
    public var isReplayable: Bool {
        if case .oneShotStream = source { return false }
        return true
    }

    /// A new stream over the body, not yet opened, for one attempt to read in chunks.
    ///
    /// - Throws: ``CourierError/Kind/createUploadableFailed`` when the file or stream cannot be
    ///   made, or the stream was read already (its status is at end, closed or failed: reading it
    ///   would send an empty or truncated body).
    public func makeInputStream() throws -> InputStream {
        let stream = try makeUncheckedInputStream()
        if let problem = StreamCheck.problem(with: stream) { throw CourierError.createUploadableFailed(problem) }
        return stream
    }

    /// A new stream over the body, opened, for one attempt to read in chunks: what a transport
    /// that reads the stream itself calls.
    ///
    /// - Throws: ``CourierError/Kind/createUploadableFailed`` as ``makeInputStream()`` does, and
    ///   when the stream fails to open (a file that is gone, say).
    public func openInputStream() throws -> InputStream {
        let stream = try makeInputStream()
        if stream.streamStatus == .notOpen { stream.open() }
        if let problem = StreamCheck.problem(with: stream) {
            stream.close()
            throw CourierError.createUploadableFailed(problem)
        }
        return stream
    }

    private func makeUncheckedInputStream() throws -> InputStream {
        switch source {
        case .data(let data):
            return InputStream(data: data)
        case .file(let url):
            guard let stream = InputStream(url: url) else {
                throw CourierError.createUploadableFailed(FileBodyCheck.Failure.unreadable(url))
            }
            return stream
        case .stream(let makeStream):
            do {
                return try makeStream()
            } catch let error as CourierError {
                throw error
            } catch {
                throw CourierError.createUploadableFailed(error)
            }
        case .oneShotStream(let stream):
            guard let taken = stream.take() else {
                throw CourierError.createUploadableFailed(FileBodyCheck.Failure.streamAlreadyRead)
            }
            return taken
        }
    }
}

// @unchecked Sendable: the stream is handed out once, under the lock, to one attempt that alone reads it.
/// A caller's `InputStream` that can be read by one attempt only.
final class OneShotStream: @unchecked Sendable {
    private let stream: Protected<InputStream?>

    init(_ stream: InputStream) {
        self.stream = Protected(stream)
    }

    /// The stream, the first time; `nil` afterwards.
    func take() -> InputStream? {
        stream.withLock { stream in
            defer { stream = nil }
            return stream
        }
    }
}

/// Checks a body's stream before it is sent: a stream that was read already or failed reads as
/// empty, and FoundationNetworking would send that empty body as if it were the whole one.
enum StreamCheck {
    /// Why `stream` cannot supply a body from its start, or `nil` when it can.
    static func problem(with stream: InputStream) -> FileBodyCheck.Failure? {
        switch stream.streamStatus {
        case .atEnd, .closed:
            return FileBodyCheck.Failure.streamAlreadyRead
        case .error:
            return FileBodyCheck.Failure(
                description:
                    "The body's InputStream failed: \(error(of: stream)?.localizedDescription ?? "no reason given")."
            )
        default:
            return nil
        }
    }

    /// The stream's error, read only when its status says it has one: Linux Foundation's
    /// `streamError` traps in any other state.
    static func error(of stream: InputStream) -> (any Error)? {
        stream.streamStatus == .error ? stream.streamError : nil
    }
}

/// Checks that a file can be uploaded before any attempt tries to, so the caller gets a clear error.
enum FileBodyCheck {
    /// Why a body could not be read.
    struct Failure: LocalizedError, CustomStringConvertible {
        let description: String
        var errorDescription: String? { description }

        static func unreadable(_ url: URL) -> Failure {
            Failure(description: "The file \(url.path) cannot be read.")
        }

        static let streamAlreadyRead = Failure(
            description:
                "The body's InputStream was read already; pass a closure making a new stream for each attempt."
        )
    }

    /// The size of the regular, readable file at `url`.
    static func readableFileSize(at url: URL) throws -> Int64 {
        guard url.isFileURL else {
            throw CourierError.createUploadableFailed(Failure(description: "\(url) is not a file URL."))
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw CourierError.createUploadableFailed(Failure(description: "The file \(url.path) does not exist."))
        }
        guard !isDirectory.boolValue else {
            throw CourierError.createUploadableFailed(Failure(description: "\(url.path) is a directory, not a file."))
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw CourierError.createUploadableFailed(Failure.unreadable(url))
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        guard let size = (attributes?[.size] as? NSNumber)?.int64Value else {
            throw CourierError.createUploadableFailed(Failure.unreadable(url))
        }
        return size
    }
}
