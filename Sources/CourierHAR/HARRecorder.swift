import Courier
import Foundation

/// An event monitor that records a session's traffic as an HTTP Archive (``HARArchive``).
///
/// Every exchange is an entry: each redirect hop, each attempt a retry replaced, and each
/// request's final answer, with its
/// headers, timings from `RequestMetrics`, and the body of a data request up to
/// ``maximumBodySize``. `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`
/// values are written as `REDACTED` unless ``includesCredentials``. Bodies are kept as they were
/// sent and received: a server that echoes a credential in its body (httpbin's `/get` does) has
/// it recorded, so treat an archive as you would the traffic itself.
///
/// ```swift
/// let recorder = HARRecorder()
/// let session = Session(eventMonitors: [recorder])
/// // … use the session …
/// try recorder.write(to: URL(fileURLWithPath: "run.har"))
/// ```
///
/// Replay what it wrote in tests, offline, with `StubTransport(replaying:)`.
public final class HARRecorder: EventMonitor, Sendable {
    /// The queue events arrive on.
    public let queue: DispatchQueue
    /// The most bytes of one response body kept; longer bodies are cut here, and an entry's
    /// `content.comment` says so.
    public let maximumBodySize: Int
    /// Whether credential headers are written as they were.
    public let includesCredentials: Bool
    /// The most entries kept; past it the oldest go.
    public let maximumEntries: Int
    private let entries: EntryList
    private let attempts = AttemptLog()

    /// A recorder keeping up to `maximumBodySize` bytes of each body (1 MiB by default) and the
    /// last `maximumEntries` exchanges (10,000 by default), so that recording a long run cannot
    /// take all memory.
    ///
    /// - Parameters:
    ///   - maximumBodySize: The most bytes of one body kept.
    ///   - maximumEntries: The most exchanges kept; past it the oldest are dropped.
    ///   - includesCredentials: Whether `Authorization`, `Proxy-Authorization`, `Cookie` and
    ///     `Set-Cookie` are recorded as sent and received; `false` writes them as `REDACTED`.
    ///   - queue: The serial queue events are delivered on; a queue of the recorder's own by
    ///     default.
    public init(
        maximumBodySize: Int = 1 << 20,
        maximumEntries: Int = 10_000,
        includesCredentials: Bool = false,
        queue: DispatchQueue = DispatchQueue(label: "Courier.HARRecorder")
    ) {
        self.maximumBodySize = max(0, maximumBodySize)
        self.maximumEntries = max(1, maximumEntries)
        entries = EntryList(limit: max(1, maximumEntries))
        self.includesCredentials = includesCredentials
        self.queue = queue
    }

    /// What was recorded so far.
    public var archive: HARArchive { HARArchive(entries: entries.all) }

    /// Writes what was recorded so far to `url`, atomically, readable by the user alone (it holds
    /// bodies, and credentials when ``includesCredentials``).
    ///
    /// The archive goes to a new file made `0600` beside `url`, then takes its name: no other
    /// user can open it at any moment, and `url` holds a whole archive or what it held before.
    public func write(to url: URL) throws {
        let data = try archive.jsonData()
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).har-partial")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.posixError(path: temporary.path) }
        var failure: (any Error)?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    failure = Self.posixError(path: temporary.path)
                    return
                }
                offset += count
            }
        }
        close(descriptor)
        if failure == nil, rename(temporary.path, url.path) != 0 { failure = Self.posixError(path: url.path) }
        if let failure {
            unlink(temporary.path)
            throw failure
        }
    }

    private static func posixError(path: String) -> any Error {
        let code = POSIXErrorCode(rawValue: errno) ?? .EIO
        return CocoaError(
            .fileWriteUnknown,
            userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(code)]
        )
    }

    /// Forgets what was recorded.
    public func removeAll() { entries.removeAll() }

    /// Does nothing, so that no `URLRequest` is built for this recorder.
    public func request(_ request: Request, didCreateInitialRequest head: RequestHead) {}
    /// Does nothing, so that no `URLRequest` is built for this recorder.
    public func request(_ request: Request, didCreateRequest head: RequestHead) {}
    /// Starts recording an attempt; the one before it, retried, becomes an entry.
    public func request(_ request: Request, didStartAttemptWith head: RequestHead) {
        if let retried = attempts.start(request.id, head) { entries.append(entry(retried, body: nil)) }
    }

    /// Keeps the attempt's answer for its entry.
    public func request(_ request: Request, didReceive head: ResponseHead) {
        attempts.receive(request.id, head)
    }

    /// Keeps the attempt's timings for its entry.
    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        attempts.complete(request.id, metrics)
    }

    public func request(_ request: Request, willFollow redirect: Redirect) {
        attempts.redirect(request.id, to: redirect.nextRequest)
        entries.append(
            entry(
                request: redirect.request,
                response: redirect.response,
                metrics: redirect.metrics,
                body: nil,
                redirectURL: redirect.nextRequest.url.absoluteString
            )
        )
    }

    /// The last attempt becomes an entry, with the body of a data request.
    public func requestDidFinish(_ request: Request) {
        guard let last = attempts.finish(request.id) else { return }
        entries.append(entry(last, body: (request as? DataRequest)?.data))
    }

    private func entry(_ attempt: AttemptLog.Exchange, body: Data?) -> HARArchive.Entry {
        entry(
            request: attempt.request,
            response: attempt.response,
            metrics: attempt.metrics,
            body: body,
            redirectURL: nil
        )
    }

    private func entry(
        request: RequestHead,
        response: ResponseHead,
        metrics: RequestMetrics,
        body: Data?,
        redirectURL: String?
    ) -> HARArchive.Entry {
        let version = Self.httpVersion(metrics.networkProtocolName)
        let total = max(metrics.duration, 0) * 1000
        let wait = metrics.timeToFirstByte.map { min(max($0, 0) * 1000, total) } ?? total
        var content = HARArchive.Content(
            size: body?.count ?? Int(metrics.bytesReceived),
            mimeType: response.value(forHTTPHeaderField: "Content-Type") ?? "",
            text: nil,
            encoding: nil,
            comment: nil
        )
        if let body {
            let kept = body.prefix(maximumBodySize)
            if let text = String(data: kept, encoding: .utf8) {
                content.text = text
            } else {
                content.text = kept.base64EncodedString()
                content.encoding = "base64"
            }
            if kept.count < body.count {
                content.comment = "courier: cut at \(maximumBodySize) of \(body.count) bytes"
            }
        } else if metrics.bytesReceived > 0 {
            content.comment = "courier: body not kept (only a data request's is)"
        }
        return HARArchive.Entry(
            startedDateTime: Self.timestamp(metrics.startDate),
            time: total,
            request: HARArchive.Request(
                method: request.method.rawValue,
                url: request.url.absoluteString,
                httpVersion: version,
                cookies: [],
                headers: request.headers.map { redacted(name: $0.name, value: $0.value) },
                queryString: Self.queryItems(of: request.url),
                postData: request.httpBody.map { postData($0, headers: request.headers) },
                headersSize: -1,
                bodySize: request.httpBody?.count ?? (request.httpBodyStream == nil ? 0 : -1)
            ),
            response: HARArchive.Response(
                status: response.statusCode,
                statusText: HTTPURLResponse.localizedString(forStatusCode: response.statusCode),
                httpVersion: version,
                cookies: [],
                headers: response.headers.map { redacted(name: $0.name, value: $0.value) },
                content: content,
                redirectURL: redirectURL ?? "",
                headersSize: -1,
                bodySize: Int(metrics.bytesReceived)
            ),
            cache: HARArchive.Cache(),
            timings: HARArchive.Timings(
                blocked: -1,
                dns: -1,
                connect: -1,
                ssl: -1,
                send: 0,
                wait: wait,
                receive: total - wait
            ),
            comment: metrics.responseSource == .network
                ? nil : "courier: answered from the \(metrics.responseSource.rawValue)"
        )
    }

    private func postData(_ body: Data, headers: HTTPHeaders) -> HARArchive.PostData {
        let mimeType = headers.value(for: "Content-Type") ?? ""
        if let text = String(data: body, encoding: .utf8) {
            return HARArchive.PostData(mimeType: mimeType, text: text, encoding: nil)
        }
        return HARArchive.PostData(mimeType: mimeType, text: body.base64EncodedString(), encoding: "base64")
    }

    private func redacted(name: String, value: String) -> HARArchive.NameValue {
        guard !includesCredentials, Self.credentialHeaders.contains(name.lowercased()) else {
            return HARArchive.NameValue(name: name, value: value)
        }
        return HARArchive.NameValue(name: name, value: "REDACTED")
    }

    /// Headers whose values are credentials.
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    private static func queryItems(of url: URL) -> [HARArchive.NameValue] {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.map { HARArchive.NameValue(name: $0.name, value: $0.value ?? "") }
    }

    /// `HTTP/1.1`, `HTTP/2`…, from the protocol name metrics give (`http/1.1`, `h2`).
    static func httpVersion(_ name: String?) -> String {
        switch name?.lowercased() {
        case "h2", "http/2", "http/2.0": return "HTTP/2"
        case "h3", "http/3": return "HTTP/3"
        case "http/1.0": return "HTTP/1.0"
        default: return "HTTP/1.1"
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)
        )
    }
}

/// What each request's current attempt sent and got, until it becomes an entry: when the next
/// attempt starts (a retry), or when the request finishes.
///
/// Events arrive in order on the recorder's queue, and an attempt's start always before its
/// request's finish, so the finish removes what its start made: nothing outlives a request.
///
/// `@unchecked Sendable`: `attempts` is read and written only under `lock`.
private final class AttemptLog: @unchecked Sendable {
    /// One finished exchange: what becomes an entry.
    struct Exchange {
        let request: RequestHead
        let response: ResponseHead
        let metrics: RequestMetrics
    }

    private struct Attempt {
        var request: RequestHead
        var response: ResponseHead?
        var metrics: RequestMetrics?

        var exchange: Exchange? {
            guard let response, let metrics else { return nil }
            return Exchange(request: request, response: response, metrics: metrics)
        }
    }

    private let lock = NSLock()
    private var attempts: [UUID: Attempt] = [:]

    /// Starts `id`'s attempt with `head`; returns the attempt before it, if it got an answer.
    func start(_ id: UUID, _ head: RequestHead) -> Exchange? {
        lock.withLock { attempts.updateValue(Attempt(request: head), forKey: id)?.exchange }
    }

    /// A redirect followed: the attempt's answer will be to `next`.
    func redirect(_ id: UUID, to next: RequestHead) {
        lock.withLock { attempts[id]?.request = next }
    }

    func receive(_ id: UUID, _ head: ResponseHead) {
        lock.withLock { attempts[id]?.response = head }
    }

    func complete(_ id: UUID, _ metrics: RequestMetrics) {
        lock.withLock { attempts[id]?.metrics = metrics }
    }

    /// The request's last attempt, if it got an answer; forgets the request.
    func finish(_ id: UUID) -> Exchange? {
        lock.withLock { attempts.removeValue(forKey: id)?.exchange }
    }
}

/// The recorded entries.
///
/// `@unchecked Sendable`: `entries` is read and written only under `lock`.
private final class EntryList: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [HARArchive.Entry] = []
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    var all: [HARArchive.Entry] { lock.withLock { entries } }

    func append(_ entry: HARArchive.Entry) {
        lock.withLock {
            // Dropped in batches, so that a full recorder does not move every entry each time.
            if entries.count >= limit { entries.removeFirst(max(1, min(entries.count, limit / 10))) }
            entries.append(entry)
        }
    }

    func removeAll() { lock.withLock { entries.removeAll() } }
}
