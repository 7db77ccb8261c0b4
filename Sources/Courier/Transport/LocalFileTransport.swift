import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serves `file:` URLs the same way under every transport, as URLSession serves them to
/// Alamofire: the file's bytes as the body of a `200` with its `Content-Length` and a
/// `Content-Type` from its extension. AsyncHTTPClient has no file scheme, and a request handed
/// to it would fail.
///
/// Only the caller's own URL (or an adapter's) may be a file: a redirect's `Location` is held to
/// `http` and `https`, so no server can make a client read its disk. `GET` and `HEAD` only; any
/// other method, or a body, fails with `URLError(.unsupportedURL)`.
struct LocalFileTransport: Transport {
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
    private let state = Protected((phase: Phase.idle, isReading: false))
    private let queue = DispatchQueue(label: "Courier.LocalFileTask")
    private let startDate = Date()
    /// Released once the completion is sent.
    private var eventHandler: (any TransportEventHandler)?
    private var handle: FileHandle?
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
                chunk = try handle.read(upToCount: Self.chunkSize) ?? Data()
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
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw URLError(.fileDoesNotExist)
        }
        guard !isDirectory.boolValue else { throw URLError(.fileIsDirectory) }
        let opened: FileHandle
        do {
            opened = try FileHandle(forReadingFrom: url)
        } catch {
            throw URLError(.noPermissionsToReadFile, userInfo: [NSUnderlyingErrorKey: error])
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        var fields: [(name: String, value: String)] = [
            ("Content-Type", MultipartFormData.mimeType(forPathExtension: url.pathExtension))
        ]
        if let size { fields.append(("Content-Length", String(size))) }
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
