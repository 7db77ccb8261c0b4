import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serves `file:` URLs the same way under every transport, as URLSession serves them to
/// Alamofire: the file's bytes as the body of a `200` with its `Content-Length` and a
/// `Content-Type` from its extension. AsyncHTTPClient has no file scheme, and a request handed
/// to it would fail.
///
/// Only the caller's own URL (or an adapter's) may be a file, and only while
/// `Session.Configuration.allowsFileURLs` is on: a redirect's `Location` (and a redirect
/// handler's answer) is held to `http` and `https`, so no server can make a client read its
/// disk. Regular files on this machine only: a FIFO or a device fails with
/// `URLError(.cannotOpenFile)`, another host with ``CourierError/Kind/invalidURL``. `GET` and
/// `HEAD` only; any other method, or a body, fails with `URLError(.unsupportedURL)`.
struct LocalFileTransport: Transport {
    /// Throws the ``CourierError`` for a file URL Courier will not read: one without a path, or
    /// naming another host (`file://server/share`, which Foundation would read as a local path).
    static func check(_ url: URL) throws(CourierError) {
        guard !url.path.isEmpty else { throw .invalidURL(url.absoluteString, reason: "the file URL has no path") }
        if let host = url.host, !host.isEmpty, host.lowercased() != "localhost" {
            throw .invalidURL(url.absoluteString, reason: "a file URL must name this machine, not \"\(host)\"")
        }
    }

    func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        LocalFileTask(
            url: request.url,
            method: request.httpMethod ?? "GET",
            hasBody: body != nil || request.httpBody != nil,
            eventHandler: eventHandler
        )
    }

    func invalidate() async {}
}

// @unchecked Sendable: `phase` and `isReading` sit behind `state`'s lock; the file handle, the
// offset and `hasCompleted` are touched only on the serial `queue`, where every event is sent.
/// Reads one file in chunks on a queue of its own, pausing while suspended; every event, the
/// completion included, leaves from that queue, so nothing follows the completion and it comes
/// exactly once.
final class LocalFileTask: TransportTask, @unchecked Sendable {
    private enum Phase {
        case idle, running, suspended, cancelled
    }

    /// How much is read and handed on at a time.
    static let chunkSize = 64 * 1024

    private let url: URL?
    private let method: String
    private let hasBody: Bool
    /// What every file task's queue targets: reads are short, but many files at once must not
    /// each take a thread of their own.
    private static let sharedQueue = DispatchQueue(
        label: "Courier.LocalFileTask.shared",
        qos: .utility,
        attributes: .concurrent
    )

    private let state = Protected((phase: Phase.idle, isReading: false))
    private let queue = DispatchQueue(label: "Courier.LocalFileTask", target: LocalFileTask.sharedQueue)
    private let startDate = Date()
    /// Released once the completion is sent.
    private var eventHandler: (any TransportEventHandler)?
    private var handle: FileHandle?
    /// The file's size when it was opened: no more is read, so the body matches its `Content-Length`.
    private var length: Int64 = 0
    private var bytesRead: Int64 = 0
    private var timeToFirstByte: TimeInterval?

    init(url: URL?, method: String, hasBody: Bool, eventHandler: any TransportEventHandler) {
        self.url = url
        self.method = method.uppercased()
        self.hasBody = hasBody
        self.eventHandler = eventHandler
    }

    func resume() {
        let startsReading = state.withLock { state -> Bool in
            guard state.phase == .idle || state.phase == .suspended else { return false }
            state.phase = .running
            guard !state.isReading else { return false }
            state.isReading = true
            return true
        }
        if startsReading { queue.async { [self] in read() } }
    }

    func suspend() {
        state.withLock { state in
            if state.phase == .running { state.phase = .suspended }
        }
    }

    func cancel() {
        let cancels = state.withLock { state -> Bool in
            guard state.phase != .cancelled else { return false }
            state.phase = .cancelled
            return true
        }
        if cancels { queue.async { [self] in complete(URLError(.cancelled)) } }
    }

    /// On `queue`: opens the file (the first time) and hands on chunks while running; stops,
    /// leaving the rest for ``resume()``, when suspended.
    private func read() {
        // Cancelled before the file was opened: the cancel's own completion, queued, ends it.
        guard eventHandler != nil, state.withLock({ $0.phase }) != .cancelled else { return }
        if handle == nil {
            do {
                try open()
            } catch {
                complete(error)
                return
            }
            if method == "HEAD" {
                complete(nil)
                return
            }
        }
        while let handle {
            let goesOn = state.withLock { state -> Bool in
                guard state.phase == .running else {
                    state.isReading = false
                    return false
                }
                return true
            }
            guard goesOn else { return }
            let chunk: Data
            do {
                let wanted = Int(min(Int64(Self.chunkSize), length - bytesRead))
                chunk = wanted > 0 ? try handle.read(upToCount: wanted) ?? Data() : Data()
            } catch {
                complete(URLError(.cannotOpenFile, userInfo: [NSUnderlyingErrorKey: error]))
                return
            }
            guard !chunk.isEmpty else {
                complete(nil)
                return
            }
            bytesRead += Int64(chunk.count)
            timeToFirstByte = timeToFirstByte ?? Date().timeIntervalSince(startDate)
            eventHandler?.transportTask(self, didReceive: chunk)
        }
    }

    /// On `queue`: checks the request and the file, opens it and sends the response head.
    private func open() throws(URLError) {
        guard let url, url.isFileURL, method == "GET" || method == "HEAD", !hasBody else {
            throw URLError(.unsupportedURL)
        }
        // What a symbolic link names, as URLSession reads it (the attributes of a link are its own).
        let file = url.resolvingSymlinksInPath()
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        } catch {
            throw URLError(.fileDoesNotExist, userInfo: [NSUnderlyingErrorKey: error])
        }
        let type = attributes[.type] as? FileAttributeType
        if type == .typeDirectory { throw URLError(.fileIsDirectory) }
        // Only a regular file: opening a FIFO blocks until a writer comes, and a device such as
        // `/dev/zero` never ends.
        guard type == .typeRegular, let size = (attributes[.size] as? NSNumber)?.int64Value else {
            throw URLError(.cannotOpenFile)
        }
        let opened: FileHandle
        do {
            opened = try FileHandle(forReadingFrom: file)
        } catch {
            throw URLError(.cannotOpenFile, userInfo: [NSUnderlyingErrorKey: error])
        }
        let fields: [(name: String, value: String)] = [
            ("Content-Type", MultipartFormData.mimeType(forPathExtension: url.pathExtension)),
            ("Content-Length", String(size)),
        ]
        length = size
        handle = opened
        let head = ResponseHead(url: url, statusCode: 200, httpVersion: nil, headerFields: fields)
        eventHandler?.transportTask(self, didReceive: head)
    }

    /// On `queue`: sends the completion, once, and lets go of the file and the handler.
    private func complete(_ error: URLError?) {
        guard let handler = eventHandler else { return }
        eventHandler = nil
        try? handle?.close()
        handle = nil
        let metrics = RequestMetrics(
            startDate: startDate,
            endDate: Date(),
            timeToFirstByte: timeToFirstByte,
            bytesSent: 0,
            bytesReceived: bytesRead,
            statusCode: error == nil ? 200 : nil
        )
        handler.transportTask(self, didCompleteWith: error, metrics: metrics)
    }
}
