import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs requests over Foundation's `URLSession` (FoundationNetworking on Linux).
///
/// The default transport where `CourierNIO` is not linked. It owns its `URLSession` and
/// invalidates it in ``invalidate()`` and on deinit.
///
/// Behaviours made to match the AsyncHTTPClient transport: no response cache and no automatic
/// cookies (both are Courier features of their own), and no redirect followed: a `3xx` is
/// reported as it is, and the request follows it (see ``Redirect``).
///
/// A configuration that comes with a `URLCache` (`URLSessionConfiguration.default` has the
/// shared one) gets Courier's ``HTTPCache`` in its place, in ``httpCache``: FoundationNetworking's
/// cache cannot be trusted (it keys entries without the query, serves responses without a
/// lifetime forever, stores nothing with `Vary`, and `returnCacheDataDontLoad` still goes to the
/// network), and one cache behaves the same everywhere. A session over the transport uses it
/// unless its own ``Session/Configuration/httpCache`` is set.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let router: TaskRouter
    /// Times out idle attempts, with one timer for all of them.
    let idleWatch = IdleWatch(scheduler: DispatchIdleTimerScheduler())
    /// Courier's cache in place of the `URLCache` the configuration had: in memory, with the
    /// `URLCache`'s `memoryCapacity` as its limit (its `diskCapacity`, up to 20 MiB, when it had
    /// only that; at least 512 KiB); `nil` when the configuration had none, or one with no
    /// capacity at all. For a cache on disk, set ``Session/Configuration/httpCache``; for none,
    /// give the transport a configuration without a `URLCache`.
    public let httpCache: HTTPCache?
    /// What the configuration's `requestCachePolicy` asks of ``httpCache`` for a request whose
    /// own policy is `useProtocolCachePolicy` and that chose no ``RequestCacheMode``.
    let defaultCacheMode: RequestCacheMode
    /// The most response bytes a task holds for a suspended request when the transfer cannot be
    /// paused (FoundationNetworking); past it the request fails with
    /// ``CourierError/Kind/bufferLimitExceeded`` rather than growing without end.
    public let maximumHeldBytes: Int

    /// Creates a transport with a session made from `configuration`.
    ///
    /// - Parameters:
    ///   - configuration: The URLSession configuration; by default `.default` with no URL cache
    ///     and no cookie handling. Its delegate queue is always Courier's own serial queue. A
    ///     `URLCache` it has is replaced by Courier's cache (``httpCache``), and its
    ///     `requestCachePolicy` then applies to that cache. Its cookie handling is always turned
    ///     off: the Courier session keeps cookies (`Session.Configuration.cookieStorage`; wrap an
    ///     `HTTPCookieStorage` in ``HTTPCookieStorageAdapter`` to keep them there). Its
    ///     `httpAdditionalHeaders` go on every request URLSession sends, each redirect hop to
    ///     another origin too, where Courier cannot drop them: give credentials to the request
    ///     (`authenticate`, its headers) or an adapter, not to this configuration.
    ///   - maximumHeldBytes: Where the transfer cannot be paused (FoundationNetworking on Linux),
    ///     the most response bytes held in memory for a request that is suspended, such as a
    ///     stream whose consumer fell behind (16 MiB by default; at least 64 KiB). Past it, the
    ///     request fails with ``CourierError/Kind/bufferLimitExceeded``. Apple's URLSession pauses
    ///     the transfer instead, and holds nothing.
    public init(
        configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
        maximumHeldBytes: Int = URLSessionTransport.defaultMaximumHeldBytes
    ) {
        self.maximumHeldBytes = max(64 * 1024, maximumHeldBytes)
        router = TaskRouter()
        let urlCache = configuration.urlCache
        var configuration = configuration
        let handlesCookies = configuration.httpShouldSetCookies || configuration.httpCookieAcceptPolicy != .never
        if urlCache != nil || handlesCookies {
            // A copy, so the caller's configuration keeps what it was given; FoundationNetworking's
            // cache never runs.
            if let copy = configuration.copy() as? URLSessionConfiguration { configuration = copy }
            configuration.urlCache = nil
            // Cookies are the Courier session's (its `cookieStorage`), kept by RFC 6265 on each
            // redirect hop Courier follows. URLSession's own would be added and stored on every
            // hop beside them, by FoundationNetworking's looser rules on Linux.
            configuration.httpShouldSetCookies = false
            configuration.httpCookieAcceptPolicy = .never
        }
        // One of no capacity is a common way to turn caching off: it stays off.
        if let urlCache, urlCache.memoryCapacity > 0 || urlCache.diskCapacity > 0 {
            httpCache = .memory(byteLimit: Self.replacementCacheLimit(for: urlCache))
            defaultCacheMode = RequestCacheMode(configuration.requestCachePolicy)
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        } else {
            httpCache = nil
            defaultCacheMode = .default
        }
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: DelegateQueue())
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Gives `request` a timeout FoundationNetworking honours. It ignores a `timeoutInterval`
    /// given to `URLRequest`'s initialiser (only the setter arms its timer) and truncates the
    /// interval to whole seconds, so `0.5` would time out at once; the interval is set again,
    /// rounded up, so a timeout is never shorter than asked. It also multiplies the seconds into
    /// an `Int` of milliseconds, so anything beyond about 30 years is set to that (it would trap),
    /// and so is an infinite, NaN, zero or negative one: no timeout, as on AsyncHTTPClient (set
    /// through the setter, infinity and NaN would trap, and a negative one times out at once).
    /// Apple's URLSession needs none of this.
    ///
    /// Set in place: on a request nothing else holds, FoundationNetworking's setter then changes
    /// it rather than copying it first (some 7,000 instructions).
    static func applyWorkingTimeout(_ request: inout URLRequest) {
        #if canImport(FoundationNetworking)
        let interval = request.timeoutInterval
        request.timeoutInterval = interval > 0 ? min(max(1, interval.rounded(.up)), 1e9) : 1e9
        #endif
    }

    /// Sends a body without a `Content-Type` unlabelled, as AsyncHTTPClient does. libcurl, under
    /// FoundationNetworking, labels such a body `application/x-www-form-urlencoded`, so a server
    /// reads raw bytes as a form (and finds no body); a header whose value is blank is curl's
    /// way to send none.
    static func keepUnlabelled(_ request: inout URLRequest, hasBody: Bool) {
        #if canImport(FoundationNetworking)
        guard hasBody || request.httpBody != nil, request.value(forHTTPHeaderField: "Content-Type") == nil else {
            return
        }
        request.setValue(" ", forHTTPHeaderField: "Content-Type")
        #endif
    }

    /// Sends a streamed body of known `length` with `Content-Length` rather than chunked.
    /// FoundationNetworking gives libcurl no length for a stream, and libcurl then chunks it
    /// unless the request names its own `Content-Length` and blanks `Transfer-Encoding` (libcurl's
    /// way to send none).
    static func sendUnchunked(_ request: inout URLRequest, length: Int64) {
        #if canImport(FoundationNetworking)
        request.setValue(String(length), forHTTPHeaderField: "Content-Length")
        request.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
        #endif
    }

    /// Whether suspending a request pauses its transfer on the network (backpressure), as on Apple
    /// platforms. FoundationNetworking cannot: a suspended task starts its request over when
    /// resumed (a second response, the body again from its first byte). There, a started transfer
    /// keeps running while suspended and its events wait, in memory, until it resumes: a slow
    /// consumer is not protected from a fast server. Use the AsyncHTTPClient transport (the
    /// default on Linux when `CourierNIO` is linked) for backpressure.
    public static let pausesTransfers: Bool = {
        #if canImport(FoundationNetworking)
        return false
        #else
        return true
        #endif
    }()

    /// The byte limit of the cache that replaces `urlCache`.
    static func replacementCacheLimit(for urlCache: URLCache) -> Int64 {
        let capacity =
            urlCache.memoryCapacity > 0 ? Int64(urlCache.memoryCapacity) : min(Int64(urlCache.diskCapacity), 20 << 20)
        return max(512 * 1024, capacity)
    }

    /// Whether suspending `task` holds its transfer back on the network, rather than holding its
    /// events in memory (a task of this transport where it cannot pause transfers).
    static func suspensionPauses(_ task: any TransportTask) -> Bool {
        // A task that wraps another (the HTTP cache's) answers for the one on the network.
        (task as? any TransferPausing)?.suspensionPausesTransfer ?? true
    }

    /// The default of ``maximumHeldBytes``: 16 MiB.
    public static let defaultMaximumHeldBytes = 16 * 1024 * 1024

    /// `URLSessionConfiguration.default` without a URL cache and without automatic cookies.
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return configuration
    }

    /// Makes a data task, or an upload task for a file or stream `body` (a stream of unknown
    /// length is sent chunked).
    public func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        var request = request
        return makeTask(sending: &request, body: body, eventHandler: eventHandler)
    }

    /// Makes a task for the `URLRequest` the head describes, built here, where nothing else holds
    /// it: FoundationNetworking's setters then change it in place.
    public func makeTask(
        for head: RequestHead,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        var request = head.urlRequest
        return makeTask(sending: &request, body: body, eventHandler: eventHandler)
    }

    private func makeTask(
        sending request: inout URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        let idleTimeout = request.timeoutInterval
        Self.applyWorkingTimeout(&request)
        Self.keepUnlabelled(&request, hasBody: body != nil)
        let session = self.session
        let made = router.unlessInvalidated { () -> URLSessionDataTask in
            switch body?.source {
            case nil:
                return session.dataTask(with: request)
            case .data(let data):
                request.httpBody = data
                return session.dataTask(with: request)
            #if canImport(FoundationNetworking)
            case .file, .stream, .oneShotStream:
                // A file goes as a stream too: FoundationNetworking's own file upload reads ahead
                // on a dispatch queue and then resumes the transfer with a forced `try`, which traps
                // once the transfer has ended, so a server that resets the connection mid-upload
                // crashed the process. The router hands the stream over when URLSession asks for
                // it, once per send.
                request.httpBody = nil
                if let length = body?.length { Self.sendUnchunked(&request, length: length) }
                return session.uploadTask(withStreamedRequest: request)
            #else
            case .file(let url):
                request.httpBody = nil
                return session.uploadTask(with: request, fromFile: url)
            case .stream, .oneShotStream:
                // The router hands the stream over when URLSession asks for it, once per send.
                request.httpBody = nil
                return session.uploadTask(withStreamedRequest: request)
            #endif
            }
        }
        // FoundationNetworking crashes on a task made once invalidation has begun: a late one
        // (a redirect's next hop, a cache's revalidation) fails as cancelled instead.
        guard let dataTask = made else {
            return FailedTransportTask(error: URLError(.cancelled), eventHandler: eventHandler)
        }
        let task = URLSessionTransportTask(
            dataTask: dataTask,
            body: body,
            delegateQueue: session.delegateQueue,
            eventHandler: eventHandler,
            maximumHeldBytes: maximumHeldBytes,
            idleTimeout: idleTimeout,
            idleWatch: idleWatch
        )
        router.register(task, for: dataTask.taskIdentifier)
        return task
    }

    /// Invalidates the session once its tasks have ended, and returns when URLSession reports it
    /// invalid: the tasks' last delegate calls have run by then, so nothing of theirs (no
    /// request) is still held on the delegate queue. Calling it again waits for the same end.
    public func invalidate() async {
        await withCheckedContinuation { continuation in
            if router.awaitInvalidation(continuation) { session.finishTasksAndInvalidate() }
        }
    }
}

/// A task that knows whether suspending it pauses its transfer on the network; a task that does
/// not conform is taken to pause (it holds nothing in memory for the network).
protocol TransferPausing {
    /// Whether ``TransportTask/suspend()`` holds the transfer back rather than its events.
    var suspensionPausesTransfer: Bool { get }
}

/// One `URLSessionDataTask` and what it has observed.
final class URLSessionTransportTask: TransportTask, IdleWatched, TransferPausing, Sendable {
    var suspensionPausesTransfer: Bool { URLSessionTransport.pausesTransfers }

    private struct Progress {
        var startDate: Date?
        var responseDate: Date?
        var bytesReceived: Int64 = 0
        var statusCode: Int?
        var networkProtocolName: String?
        var remoteAddress: String?
        var completed = false
        /// Whether the data task is suspended, as it is when made: URLSession counts suspensions,
        /// so each call is passed on only when it changes something.
        var isSuspended = true
        /// Whether the data task has been resumed once.
        var hasStarted = false
        /// Events held while suspended, delivered in order on resume (FoundationNetworking only).
        var heldEvents: [HeldEvent] = []
        /// Whether ``cancel()`` was called: a cancellation error is then the caller's.
        var isCancelled = false
        /// A `401`/`407` whose authentication challenge was declined (see ``didDeclineChallenge(with:)``).
        var declinedChallengeResponse: HTTPURLResponse?
        /// Why the body stream could not be opened; the task was cancelled for it.
        var bodyError: (any Error)?
        /// Why Courier stopped the transfer itself (too many bytes held for a suspended consumer);
        /// the task was cancelled for it, and fails with this.
        var stopReason: URLError?
        /// Bytes of body held in ``heldEvents``.
        var heldBytes = 0
        /// When the last event (head, body, bytes sent) arrived, or the caller last resumed: the
        /// idle timeout counts from here.
        var lastActivity = DispatchTime.now()
    }

    /// What the data task reported while the caller had suspended the attempt.
    enum HeldEvent {
        case response(ResponseHead)
        case data(Data)
        case completion((any Error)?)
    }

    let dataTask: URLSessionDataTask
    /// The body read as it is sent, for file and stream uploads.
    let body: RequestBody?
    /// Where the session calls its delegate, one call at a time; held events are replayed there.
    private let delegateQueue: OperationQueue
    /// Held until the task is let go after its completion: a request in flight stays alive
    /// through it (the request lets go of its task when the attempt ends, so nothing is kept
    /// in a cycle after that).
    let eventHandler: any TransportEventHandler
    private let state = Protected(Progress())
    /// See ``URLSessionTransport/maximumHeldBytes``.
    private let maximumHeldBytes: Int
    /// The request's `timeoutInterval`: the longest the attempt may go without an event (the
    /// response head, a piece of body, body bytes sent). Courier keeps this clock itself, with
    /// the AsyncHTTPClient transport's rule: libcurl's own counts bytes, so a head trickled a byte
    /// at a time would never time out here and time out at once there.
    private let idleTimeout: TimeInterval?
    /// ``idleTimeout`` in nanoseconds.
    private let idleTimeoutNanoseconds: UInt64
    /// The transport's one timer for idle attempts, which checks this one from its first resume
    /// until its completion.
    private let idleWatch: IdleWatch

    init(
        dataTask: URLSessionDataTask,
        body: RequestBody?,
        delegateQueue: OperationQueue,
        eventHandler: any TransportEventHandler,
        maximumHeldBytes: Int = URLSessionTransport.defaultMaximumHeldBytes,
        idleTimeout: TimeInterval = 0,
        idleWatch: IdleWatch
    ) {
        self.dataTask = dataTask
        self.body = body
        self.delegateQueue = delegateQueue
        self.eventHandler = eventHandler
        self.maximumHeldBytes = maximumHeldBytes
        self.idleTimeout = idleTimeout > 0 && idleTimeout < 1e9 ? idleTimeout : nil
        self.idleTimeoutNanoseconds = self.idleTimeout.map { UInt64($0 * 1e9) } ?? 0
        self.idleWatch = idleWatch
    }

    /// Something moved: the idle clock starts again.
    func noteActivity() {
        state.withLock { $0.lastActivity = .now() }
    }

    /// Fails the attempt with `URLError(.timedOut)` once nothing has moved for ``idleTimeout``,
    /// else answers when to look again; `nil` once the attempt needs no more checks. A suspended
    /// attempt is paused by its caller, not idle, so its clock restarts.
    func checkIdle(at now: UInt64) -> UInt64? {
        guard let idleTimeout else { return nil }
        enum Verdict {
            case stop
            case checkAgain(at: UInt64)
            case timeOut
        }
        let verdict = state.withLock { state -> Verdict in
            guard !state.completed, !state.isCancelled, state.stopReason == nil else { return .stop }
            if state.isSuspended { state.lastActivity = DispatchTime(uptimeNanoseconds: now) }
            let (deadline, overflow) = state.lastActivity.uptimeNanoseconds.addingReportingOverflow(
                idleTimeoutNanoseconds
            )
            if overflow { return .checkAgain(at: .max) }
            return deadline > now ? .checkAgain(at: deadline) : .timeOut
        }
        switch verdict {
        case .stop:
            return nil
        case .checkAgain(let deadline):
            return deadline
        case .timeOut:
            stop(
                with: URLError(
                    .timedOut,
                    userInfo: [NSLocalizedDescriptionKey: "The request timed out (no data for \(idleTimeout) s)."]
                )
            )
            return nil
        }
    }

    /// Starts the idle clock's checks, unless the attempt completed meanwhile.
    private func startWatchingIdleness() {
        let now = DispatchTime.now().uptimeNanoseconds
        let (firstCheck, overflow) = now.addingReportingOverflow(idleTimeoutNanoseconds)
        idleWatch.watch(self, firstCheck: overflow ? .max : firstCheck)
        // A completion before the watch took nothing out: it would stay until the timer fires.
        if state.withLock({ $0.completed }) { idleWatch.stopWatching(self) }
    }

    /// Stops the transfer for `reason`: nothing more is delivered, and the attempt fails with it,
    /// carried in a `URLError` so that the request reports the ``CourierError`` itself.
    func stop(for reason: CourierError) {
        let code: URLError.Code
        switch reason.kind {
        case .invalidURL: code = .badURL
        case .invalidResponse: code = .badServerResponse
        default: code = .dataLengthExceedsMaximum
        }
        stop(
            with: URLError(
                code,
                userInfo: [NSUnderlyingErrorKey: reason, NSLocalizedDescriptionKey: reason.localizedDescription]
            )
        )
    }

    /// Stops the transfer with `reason`: nothing more is delivered, and the attempt fails with it.
    func stop(with reason: URLError) {
        let (isFirst, completedWhileHeld) = state.withLock { state -> (Bool, Bool) in
            guard state.stopReason == nil, !state.completed else { return (false, false) }
            state.stopReason = reason
            let held = state.heldEvents.contains { if case .completion = $0 { return true } else { return false } }
            state.heldEvents.removeAll()
            state.heldBytes = 0
            return (true, held)
        }
        guard isFirst else { return }
        if completedWhileHeld {
            // The data task has ended already and will not report again: the stop completes it.
            delegateQueue.addOperation { [self] in deliverCompletion(with: reason) }
            return
        }
        // FoundationNetworking may call from its own work queue, which cancel() waits for: not from here.
        let dataTask = self.dataTask
        DispatchQueue.global().async { dataTask.cancel() }
    }

    /// A new stream over the body for URLSession to send, or `nil` (the task is then cancelled
    /// and completes with `URLError(.cannotOpenFile)`).
    func makeBodyStream() -> InputStream? {
        do {
            guard let body else { throw FileBodyCheck.Failure(description: "The request has no body to stream.") }
            #if canImport(FoundationNetworking)
            // FoundationNetworking sends a stream that fails to open as an empty body, without an
            // error: opened here, the failure is seen. It reads an opened stream as it would its own.
            return try body.openInputStream()
            #else
            return try body.makeInputStream()
            #endif
        } catch {
            state.withLock { $0.bodyError = error }
            // FoundationNetworking asks on its own work queue, which cancel() waits for: not from here.
            let dataTask = self.dataTask
            DispatchQueue.global().async { dataTask.cancel() }
            return nil
        }
    }

    func resume() {
        // Under the lock, so calls from two threads reach the data task in the order they were decided.
        let (replaysHeldEvents, startsClock) = state.withLock { state -> (Bool, Bool) in
            let isFirst = state.startDate == nil
            if isFirst { state.startDate = Date() }
            guard state.isSuspended else { return (false, false) }
            state.isSuspended = false
            state.lastActivity = .now()
            if !state.hasStarted || URLSessionTransport.pausesTransfers {
                state.hasStarted = true
                dataTask.resume()
                return (false, isFirst)
            }
            return (!state.heldEvents.isEmpty, isFirst)
        }
        if startsClock, idleTimeout != nil { startWatchingIdleness() }
        if replaysHeldEvents {
            // On the delegate queue, so they stay in order with what the task reports next.
            delegateQueue.addOperation { [self] in deliverHeldEvents() }
        }
    }

    func suspend() {
        state.withLock { state in
            guard !state.isSuspended else { return }
            state.isSuspended = true
            if !state.hasStarted || URLSessionTransport.pausesTransfers { dataTask.suspend() }
        }
    }

    /// Holds `event` while the attempt is suspended (or earlier events still wait), else lets it
    /// through. Past ``maximumHeldBytes`` of held body, the transfer is stopped instead.
    private func holds(_ event: HeldEvent) -> Bool {
        guard !URLSessionTransport.pausesTransfers else { return false }
        let overflows = state.withLock { state -> Bool? in
            // A cancellation is the caller's, a stop Courier's: the completion goes through even
            // while suspended. Decided under the lock that holds it, so a cancel() between the
            // check and the holding cannot leave the completion held with nobody to release it
            // (a stream rejected on its head hung that way).
            if case .completion = event, state.isCancelled || state.stopReason != nil {
                state.heldEvents.removeAll()
                return nil
            }
            guard state.isSuspended || !state.heldEvents.isEmpty else { return nil }
            if case .data(let data) = event {
                state.heldBytes += data.count
                if state.heldBytes > maximumHeldBytes { return true }
            }
            state.heldEvents.append(event)
            return false
        }
        guard let overflows else { return false }
        if overflows { stop(for: .bufferLimitExceeded(limit: maximumHeldBytes)) }
        return true
    }

    /// Delivers the held events in order until none is left or the attempt is suspended again.
    private func deliverHeldEvents() {
        while let event = state.withLock({ state -> HeldEvent? in
            guard !state.isSuspended, !state.heldEvents.isEmpty else { return nil }
            let event = state.heldEvents.removeFirst()
            if case .data(let data) = event { state.heldBytes -= data.count }
            return event
        }) {
            switch event {
            case .response(let head): deliver(head)
            case .data(let data): deliver(data)
            case .completion(let error): deliverCompletion(with: error)
            }
        }
    }

    func cancel() {
        // A completion held while suspended means the data task has ended already and will not
        // report again: the cancellation completes the attempt itself.
        let completedWhileHeld = state.withLock { state -> Bool in
            state.isCancelled = true
            let held = state.heldEvents.contains { if case .completion = $0 { return true } else { return false } }
            state.heldEvents.removeAll()
            return held
        }
        dataTask.cancel()
        if completedWhileHeld {
            delegateQueue.addOperation { [self] in deliverCompletion(with: URLError(.cancelled)) }
        }
    }

    /// FoundationNetworking offered a challenge for `response` (a `401` or `407` naming an
    /// authentication scheme) and the router declined it, which cancels the data task.
    func didDeclineChallenge(with response: HTTPURLResponse) {
        state.withLock { $0.declinedChallengeResponse = response }
    }

    func didReceive(_ response: HTTPURLResponse) {
        guard !isStopped else { return }
        noteActivity()
        // libcurl takes framing that SwiftNIO rightly refuses (RFC 9112 §6.3); both transports
        // must answer alike, so the refusal is made here too.
        let contentLength = response.value(forHTTPHeaderField: "Content-Length")
        if let problem = ResponseFraming.problem(in: response, contentLength: contentLength) {
            stop(for: .invalidResponse(reason: problem))
            return
        }
        let head = ResponseHead(response, contentLength: contentLength)
        if !holds(.response(head)) { deliver(head) }
    }

    /// Whether Courier stopped the transfer: what the data task still reports is dropped.
    private var isStopped: Bool { state.withLock { $0.stopReason != nil } }

    private func deliver(_ head: ResponseHead) {
        state.withLock {
            $0.responseDate = Date()
            $0.statusCode = head.statusCode
        }
        eventHandler.transportTask(self, didReceive: head)
    }

    func didReceive(_ data: Data) {
        guard !isStopped else { return }
        noteActivity()
        if !holds(.data(data)) { deliver(data) }
    }

    private func deliver(_ data: Data) {
        state.withLock { $0.bytesReceived += Int64(data.count) }
        eventHandler.transportTask(self, didReceive: data)
    }

    func didCollect(networkProtocolName: String?, remoteAddress: String?) {
        state.withLock {
            $0.networkProtocolName = networkProtocolName
            $0.remoteAddress = remoteAddress
        }
    }

    func didComplete(with error: (any Error)?) {
        if holds(.completion(error)) { return }
        deliverCompletion(with: error)
    }

    private func deliverCompletion(with error: (any Error)?) {
        var error = error
        let declined = state.withLock { progress -> HTTPURLResponse? in
            guard !progress.completed, !progress.isCancelled, (error as NSError?)?.code == NSURLErrorCancelled else {
                return nil
            }
            return progress.declinedChallengeResponse
        }
        if let declined {
            // Declining the challenge cancelled the task: report the 401 itself, as Apple's
            // URLSession does when it has no credential. Its body was never read: it arrives empty.
            error = nil
            deliver(ResponseHead(declined))
        }
        let endDate = Date()
        let progress: Progress? = state.withLock { progress in
            guard !progress.completed else { return nil }
            progress.completed = true
            return progress
        }
        guard let progress else { return }
        if idleTimeout != nil { idleWatch.stopWatching(self) }
        let startDate = progress.startDate ?? endDate
        let metrics = RequestMetrics(
            startDate: startDate,
            endDate: endDate,
            timeToFirstByte: progress.responseDate.map { $0.timeIntervalSince(startDate) },
            bytesSent: dataTask.countOfBytesSent,
            bytesReceived: progress.bytesReceived,
            statusCode: progress.statusCode,
            remoteAddress: progress.remoteAddress,
            networkProtocolName: progress.networkProtocolName
        )
        var urlError = error.map(URLSessionTransportTask.urlError)
        if let bodyError = progress.bodyError {
            urlError = URLError(
                .cannotOpenFile,
                userInfo: [NSUnderlyingErrorKey: bodyError, NSLocalizedDescriptionKey: "\(bodyError)"]
            )
        }
        if let reason = progress.stopReason, !progress.isCancelled {
            urlError = reason
        } else if let error = urlError,
            let code = Self.codeApplesURLSessionReports(for: error, afterResponse: progress.responseDate != nil)
        {
            urlError = URLError(
                code,
                userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: error.localizedDescription]
            )
        } else if let error = urlError, error.code == .badServerResponse {
            // libcurl found the response malformed: the same CourierError as SwiftNIO's parser gives.
            let reason = CourierError.invalidResponse(reason: error.localizedDescription, underlying: error)
            urlError = URLError(
                .badServerResponse,
                userInfo: [NSUnderlyingErrorKey: reason, NSLocalizedDescriptionKey: reason.localizedDescription]
            )
        }
        eventHandler.transportTask(self, didCompleteWith: urlError, metrics: metrics)
    }

    /// The code Apple's URLSession and AsyncHTTPClient give a failure FoundationNetworking
    /// (libcurl) reports under another code, or `nil` when the code already agrees; retry
    /// policies must read the same code on every transport:
    ///
    /// | FoundationNetworking says | libcurl's message | code |
    /// |---|---|---|
    /// | `.unknown`, after the head | "transfer closed with N bytes remaining" | `.networkConnectionLost` |
    /// | `.badServerResponse`, no head | "Empty reply from server" | `.networkConnectionLost` |
    /// | `.cannotConnectToHost` | "… Network is unreachable" (no network at all) | `.notConnectedToInternet` |
    /// | `.unknown`, no head | "SSL certificate problem: …" | `.serverCertificateUntrusted` |
    /// | `.unknown`, no head | other "SSL …" / "TLS …" failures | `.secureConnectionFailed` |
    static func codeApplesURLSessionReports(for error: URLError, afterResponse: Bool) -> URLError.Code? {
        #if canImport(FoundationNetworking)
        let message = error.localizedDescription
        switch error.code {
        case .unknown where afterResponse:
            return .networkConnectionLost
        case .unknown where message.hasPrefix("SSL certificate problem"):
            return .serverCertificateUntrusted
        case .unknown where message.contains("SSL") || message.contains("TLS"):
            return .secureConnectionFailed
        case .badServerResponse where !afterResponse && message == "Empty reply from server":
            return .networkConnectionLost
        case .cannotConnectToHost where message.hasSuffix("Network is unreachable"):
            return .notConnectedToInternet
        default:
            return nil
        }
        #else
        return nil
        #endif
    }

    /// The error as a `URLError`; URLSession reports those already, anything else is `.unknown`.
    static func urlError(_ error: any Error) -> URLError {
        if let error = error as? URLError { return error }
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain {
            return URLError(URLError.Code(rawValue: nsError.code) ?? .unknown, userInfo: nsError.userInfo)
        }
        return URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
    }
}

/// The session's delegate: routes each callback to the ``URLSessionTransportTask`` it concerns.
///
/// `@unchecked Sendable`: the one mutable member, `tasks`, sits behind one lock.
private final class TaskRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let tasks = Protected([Int: URLSessionTransportTask]())
    /// Who waits for the session to become invalid (`nil` once it has), and whether someone
    /// started the invalidation.
    private let invalidation = Protected<(waiters: [CheckedContinuation<Void, Never>]?, isStarted: Bool)>(([], false))

    /// Resumes `waiter` once the session is invalid (at once if it is already). Returns `true`
    /// for the first call only: its caller starts the invalidation, which URLSession reports
    /// once (after a second `finishTasksAndInvalidate()` it reports nothing).
    func awaitInvalidation(_ waiter: CheckedContinuation<Void, Never>) -> Bool {
        let (isWaiting, starts) = invalidation.withLock { state -> (Bool, Bool) in
            guard state.waiters != nil else { return (false, false) }
            state.waiters?.append(waiter)
            defer { state.isStarted = true }
            return (true, !state.isStarted)
        }
        if !isWaiting { waiter.resume() }
        return starts
    }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        let waiters = invalidation.withLock { state in
            defer { state.waiters = nil }
            return state.waiters ?? []
        }
        waiters.forEach { $0.resume() }
    }

    /// What `make` makes, made under the lock that starts the invalidation: `nil` once it has
    /// started, so that no task is ever made on an invalidated session.
    func unlessInvalidated<Made>(_ make: () -> Made) -> Made? {
        invalidation.withLock { state in state.isStarted || state.waiters == nil ? nil : make() }
    }

    func register(_ task: URLSessionTransportTask, for identifier: Int) {
        tasks.withLock { $0[identifier] = task }
    }

    private func task(for sessionTask: URLSessionTask) -> URLSessionTransportTask? {
        tasks.withLock { $0[sessionTask.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let response = response as? HTTPURLResponse {
            task(for: dataTask)?.didReceive(response)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        task(for: dataTask)?.didReceive(data)
    }

    func urlSession(
        _ session: URLSession,
        task sessionTask: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard let task = task(for: sessionTask) else { return }
        task.noteActivity()
        // A streamed body reports an expected length of 0: the body knows better, if anyone does.
        let expected = task.body?.length ?? (totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
        task.eventHandler.transportTask(task, didSendBodyBytes: totalBytesSent, of: expected)
    }

    func urlSession(
        _ session: URLSession,
        task sessionTask: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        completionHandler(task(for: sessionTask)?.makeBodyStream())
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Courier follows redirects itself, in the request (Request.Attempt), the same way on
        // every transport: the 3xx, with its body, is the response here.
        completionHandler(nil)
    }

    #if !canImport(FoundationNetworking)
    func urlSession(
        _ session: URLSession,
        task sessionTask: URLSessionTask,
        didFinishCollecting metrics: URLSessionTaskMetrics
    ) {
        let transaction = metrics.transactionMetrics.last
        let address = transaction?.remoteAddress.map { address in
            transaction?.remotePort.map { "\(address):\($0)" } ?? address
        }
        task(for: sessionTask)?.didCollect(
            networkProtocolName: transaction?.networkProtocolName,
            remoteAddress: address
        )
    }
    #endif

    /// Declines HTTP authentication challenges: Courier answers them itself, the same way over
    /// every transport (``Request/authenticate(with:)``, the session's credential storage). Handed
    /// a credential for a Digest server, FoundationNetworking stops the process, and with none
    /// it leaves the task hanging forever; declined, the task reports the `401` as it is, for the
    /// request to answer. Other challenges (server trust) get the default handling.
    func urlSession(
        _ session: URLSession,
        task sessionTask: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let method = challenge.protectionSpace.authenticationMethod
        #if canImport(FoundationNetworking)
        // Every HTTP challenge, proxies' too: FoundationNetworking can answer none of them safely.
        let httpMethods = [
            NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
            NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
        ]
        guard httpMethods.contains(method) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        // FoundationNetworking raises these with the response; cancelling ends the task, which
        // then reports that response.
        guard let response = challenge.failureResponse as? HTTPURLResponse else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        task(for: sessionTask)?.didDeclineChallenge(with: response)
        completionHandler(.cancelAuthenticationChallenge, nil)
        #else
        // Only what Courier answers itself (a server's Basic or Digest): a proxy's challenge,
        // NTLM and Negotiate (single sign-on) keep Apple's own handling. Rejected, the space
        // is passed over and URLSession delivers the 401 for the request to answer.
        let answeredByCourier = [
            NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodDefault,
        ]
        guard answeredByCourier.contains(method), !challenge.protectionSpace.isProxy() else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        completionHandler(.rejectProtectionSpace, nil)
        #endif
    }

    func urlSession(_ session: URLSession, task sessionTask: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let task = tasks.withLock { $0.removeValue(forKey: sessionTask.taskIdentifier) }
        task?.didComplete(with: error)
    }
}

extension Transport where Self == URLSessionTransport {
    /// A URLSession transport with ``URLSessionTransport/defaultConfiguration()``.
    public static var urlSession: URLSessionTransport { URLSessionTransport() }

    /// A URLSession transport over a session made from `configuration`.
    public static func urlSession(configuration: URLSessionConfiguration) -> URLSessionTransport {
        URLSessionTransport(configuration: configuration)
    }
}
