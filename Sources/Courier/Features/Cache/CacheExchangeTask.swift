import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One exchange through Courier's ``HTTPCache``: the task a ``CachingTransport`` hands the
/// request, and the event handler of the network task behind it, when there is one.
///
/// It plays a stored response (a hit, a `304`'s merged entry, a stale one on error, a `504` for
/// `only-if-cached`) as a transport would: the head, the body in chunks read from the store
/// (constant memory, whatever its size), then the completion, in order, one at a time, on a
/// global queue (a step hands its part over before the next is queued), never in the caller of
/// ``resume()``; ``suspend()`` pauses between chunks, and
/// ``cancel()`` completes it with `URLError(.cancelled)` once. A network answer goes through
/// to the request, its body written to the store on the way when the rules allow it.
///
/// With a store that reads and writes files (the disk store), the exchange has a serial queue of
/// its own: the lookup runs there once resumed, and so does every network event, in order,
/// so that no file is touched on the transport's thread (an event loop serves many
/// connections). Bodies queued there are bounded: past ``maximumQueuedBytes`` the network task
/// is suspended until the disk has caught up, or, when it cannot pause its transfer
/// (FoundationNetworking), the body stops being stored so that the queue catches up at once.
final class CacheExchangeTask: TransportTask, TransportEventHandler, TransferPausing {
    /// A stored response plays from this exchange, which pauses; the network's task answers for
    /// itself (FoundationNetworking's cannot pause).
    var suspensionPausesTransfer: Bool {
        let network = state.withLock { $0.playback == nil ? $0.network : nil }
        return network.map(URLSessionTransport.suspensionPauses) ?? true
    }

    /// What the exchange does.
    enum Plan {
        /// Not known yet: the store is looked up when the exchange is resumed.
        case lookingUp
        /// Answer from the store, without the network.
        case play(HTTPCachedResponse)
        /// Answer `504 Gateway Timeout` without the network (`only-if-cached`, nothing stored).
        case gatewayTimeout
        /// Ask the network; a `304` answers with `revalidating` merged, when given.
        case network(revalidating: HTTPCachedResponse?)
    }

    /// A stored response being played.
    private struct Playback {
        let head: HTTPCacheResponseHead
        let body: HTTPCacheBody?
        let source: ResponseSource
        /// The network exchange's metrics (a revalidation's), or `nil` for a plain hit.
        let networkMetrics: RequestMetrics?
        let startDate: Date
        /// The `Set-Cookie` fields of the `304` that revalidated the stored response: never
        /// stored, but passed on with it, so that the cookie the server set now is kept.
        var setCookieFields: [String] = []
        var offset: Int64 = 0
        var hasSentHead = false

        /// A stored response (or the `504`, with no body) answered without the network.
        static func fromStore(_ head: HTTPCacheResponseHead, body: HTTPCacheBody?) -> Playback {
            Playback(head: head, body: body, source: .cache, networkMetrics: nil, startDate: Date())
        }
    }

    private struct State {
        var plan: Plan
        var network: (any TransportTask)?
        /// Makes a network task for the request as the caller made it (without the cache's own
        /// conditions), reporting to this exchange: for a `304` that does not match what is stored.
        var resend: (@Sendable (CacheExchangeTask) -> any TransportTask)?
        /// The lookup still to make, on the queue, at the first resume.
        var prepare: (@Sendable (CacheExchangeTask) -> Void)?
        /// The lookup is running: a resume meanwhile waits for it.
        var isPreparing = false
        /// Body bytes handed to the queue and not yet written and passed on.
        var queuedBytes = 0
        /// The network task is suspended because the queue holds too much; with the number of
        /// the chunk that held it, which is queued only after the suspension, so that only its
        /// handling or a later one's may resume the task.
        var heldForQueue: Int?
        /// The number the next queued chunk gets.
        var nextChunk = 0
        /// The queue fell too far behind a network task that cannot pause: the body is no longer
        /// stored (the request still gets all of it).
        var stopsStoring = false
        var isStarted = false
        var isSuspended = false
        var isCancelled = false
        var isCompleted = false
        /// A playback step is queued or running: there is never more than one.
        var isStepScheduled = false
        var playback: Playback?
        /// Set at a `304` or an error status with a stale response to use: played once the
        /// network exchange has completed.
        /// With the `Set-Cookie` fields of the `304` that revalidated it, passed on with it.
        var replacement: (response: HTTPCachedResponse, source: ResponseSource, setCookieFields: [String])?
        var writer: HTTPCacheEntryWriter?
        /// The head the network answered with, for the cached-response handler.
        var networkHead: ResponseHead?
        var hasForwardedHead = false
        var requestTime = Date()
        /// A `304` for another representation than the stored one answered the cache's own
        /// conditions: its events are dropped, and the request goes again without them.
        var isResending = false
    }

    /// The most body bytes handed over in one piece when playing.
    static let chunkSize = 64 * 1024
    /// The most body bytes waiting on an exchange's queue before its network task is suspended.
    static let maximumQueuedBytes = 4 << 20

    private let cache: HTTPCache
    private let request: HTTPCacheRequest
    /// The request's attempt; `nil` for a background refresh, which nobody waits for.
    private let handler: (any TransportEventHandler)?
    /// The key whose background refresh this is, ended with it.
    private let refreshesKey: String?
    /// Where a background refresh's cookies go: no request receives its response.
    private let cookies: (any CookieStorage)?
    /// The request's cached-response handler, asked before a stored body becomes visible.
    private let decision: (@Sendable (ResponseHead) async -> ResponseHead?)?
    /// The exchange's own serial queue, for a store that reads and writes files.
    private let queue: DispatchQueue?
    private let state: Protected<State>

    /// An exchange whose plan is set by ``configure(plan:network:resend:)``, at once or, after
    /// ``prepareOnResume(using:)``, on `queue` when first resumed.
    init(
        cache: HTTPCache,
        request: HTTPCacheRequest,
        handler: (any TransportEventHandler)?,
        refreshesKey: String? = nil,
        cookies: (any CookieStorage)? = nil,
        decision: (@Sendable (ResponseHead) async -> ResponseHead?)? = nil,
        queue: DispatchQueue? = nil
    ) {
        self.decision = decision
        self.cache = cache
        self.request = request
        self.handler = handler
        self.refreshesKey = refreshesKey
        self.cookies = cookies
        self.queue = queue
        state = Protected(State(plan: .lookingUp))
    }

    /// Sets what the exchange does: play a stored response, or send `network`'s task. Refused
    /// (`false`) once the exchange is cancelled (during its lookup): a task made meanwhile is
    /// cancelled, so that none is left unresumed and held by its transport.
    @discardableResult
    func configure(
        plan: Plan,
        network: ((CacheExchangeTask) -> any TransportTask)? = nil,
        resend: (@Sendable (CacheExchangeTask) -> any TransportTask)? = nil
    ) -> Bool {
        guard !state.withLock({ $0.isCompleted || $0.isCancelled }) else { return false }
        let task = network?(self)
        let accepted = state.withLock { state -> Bool in
            guard !state.isCompleted, !state.isCancelled else { return false }
            state.plan = plan
            state.resend = resend
            state.network = task
            return true
        }
        // Its cancelled completion ends nothing more: the exchange has ended or is ending.
        if !accepted { task?.cancel() }
        return accepted
    }

    /// Makes the lookup (`prepare`, which calls ``configure(plan:network:resend:)``) on the
    /// exchange's queue at the first ``resume()``.
    func prepareOnResume(using prepare: @escaping @Sendable (CacheExchangeTask) -> Void) {
        state.withLock { $0.prepare = prepare }
    }

    // MARK: - TransportTask

    private enum ResumeAction {
        case none, schedule
        case prepare(@Sendable (CacheExchangeTask) -> Void)
        case resumeNetwork(any TransportTask)
    }

    func resume() {
        let action = state.withLock { state -> ResumeAction in
            guard !state.isCompleted else { return .none }
            state.isSuspended = false
            if let prepare = state.prepare {
                state.prepare = nil
                state.isPreparing = true
                return .prepare(prepare)
            }
            // Resumed once the lookup is made.
            guard !state.isPreparing else { return .none }
            return start(&state)
        }
        perform(action)
    }

    /// Starts playing or sending, or goes on after a suspension.
    private func start(_ state: inout State) -> ResumeAction {
        if !state.isStarted {
            state.isStarted = true
            state.requestTime = Date()
            switch state.plan {
            case .play(let cached):
                state.playback = .fromStore(cached.head, body: cached.body)
            case .gatewayTimeout:
                state.playback = .fromStore(HTTPCache.gatewayTimeoutHead, body: nil)
            case .network, .lookingUp:
                break
            }
        }
        if state.playback != nil { return scheduleStep(&state) ? .schedule : .none }
        // Held while the queue catches up: its handling resumes the task.
        if let network = state.network, state.heldForQueue == nil { return .resumeNetwork(network) }
        return .none
    }

    private func perform(_ action: ResumeAction) {
        switch action {
        case .none: break
        case .schedule: DispatchQueue.global().async { [self] in step() }
        case .prepare(let prepare):
            (queue ?? .global()).async { [self] in
                prepare(self)
                let action = state.withLock { state -> ResumeAction in
                    state.isPreparing = false
                    // Cancelled meanwhile, the cancellation is reported by the network's
                    // completion or by a step; suspended meanwhile, the next resume starts it.
                    guard !state.isCompleted, !state.isCancelled, !state.isSuspended else { return .none }
                    return start(&state)
                }
                perform(action)
            }
        case .resumeNetwork(let network): resumeNetwork(network)
        }
    }

    /// Resumes `network`, decided under the lock but done outside it (a transport may call back
    /// at once); a suspension decided meanwhile (the caller's, or the queue's hold) then wins.
    private func resumeNetwork(_ network: any TransportTask) {
        network.resume()
        if state.withLock({ $0.isSuspended || $0.heldForQueue != nil }) { network.suspend() }
    }

    func suspend() {
        let network = state.withLock { state -> (any TransportTask)? in
            state.isSuspended = true
            return state.playback == nil ? state.network : nil
        }
        network?.suspend()
    }

    func cancel() {
        enum Action {
            case none, schedule
            case cancelNetwork(any TransportTask)
        }
        let action = state.withLock { state -> Action in
            guard !state.isCompleted, !state.isCancelled else { return .none }
            state.isCancelled = true
            // A lookup not begun never will: nothing (a background refresh) starts for it.
            state.prepare = nil
            if state.playback == nil, let network = state.network {
                // Its completion (cancelled) ends the exchange, replacement or not.
                state.replacement = nil
                return .cancelNetwork(network)
            }
            // Not started, playing, or waiting for the network to end before playing: the
            // cancellation is reported by the next step.
            if state.playback == nil {
                // Only a cancelled completion will be played: the head is never sent.
                state.playback = .fromStore(HTTPCache.gatewayTimeoutHead, body: nil)
            }
            state.isSuspended = false
            return scheduleStep(&state) ? .schedule : .none
        }
        switch action {
        case .none: break
        case .schedule: DispatchQueue.global().async { [self] in step() }
        case .cancelNetwork(let network): network.cancel()
        }
    }

    /// Marks a step queued unless one is; returns whether the caller must queue it.
    private func scheduleStep(_ state: inout State) -> Bool {
        guard !state.isStepScheduled, !state.isCompleted else { return false }
        state.isStepScheduled = true
        return true
    }

    // MARK: - Playing a stored response

    /// Hands over the next part of the stored response: the head, a chunk of body, or the
    /// completion; then queues the next step, unless suspended or done.
    private func step() {
        enum Action {
            case none
            case head(HTTPCacheResponseHead, setCookieFields: [String])
            case body(HTTPCacheBody, offset: Int64)
            case complete(URLError?, RequestMetrics)
        }
        // The step keeps `isStepScheduled` set until it has handed its part over, so that a
        // resume() or cancel() meanwhile queues no second step: parts never overlap.
        let action = state.withLock { state -> Action in
            guard !state.isCompleted, var playback = state.playback else {
                state.isStepScheduled = false
                return .none
            }
            if state.isCancelled {
                state.isCompleted = true
                state.isStepScheduled = false
                return .complete(URLError(.cancelled), metrics(of: playback, received: playback.offset))
            }
            guard !state.isSuspended else {
                state.isStepScheduled = false
                return .none
            }
            if !playback.hasSentHead {
                playback.hasSentHead = true
                state.playback = playback
                return .head(playback.head, setCookieFields: playback.setCookieFields)
            }
            if let body = playback.body, request.method != "HEAD", playback.offset < body.count {
                return .body(body, offset: playback.offset)
            }
            state.isCompleted = true
            state.isStepScheduled = false
            return .complete(nil, metrics(of: playback, received: playback.offset))
        }
        switch action {
        case .none:
            return
        case .head(let head, let setCookieFields):
            handler?.transportTask(self, didReceive: responseHead(head, adding: setCookieFields))
        case .body(let body, let offset):
            let chunk: Data
            do {
                chunk = try body.read(from: offset, maximumLength: Self.chunkSize)
            } catch {
                // The stored file could not be read to its length: the response is unusable.
                let failure = URLError(
                    .cannotDecodeContentData,
                    userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: error.localizedDescription]
                )
                let metrics = state.withLock { state -> RequestMetrics? in
                    state.isStepScheduled = false
                    guard !state.isCompleted, let playback = state.playback else { return nil }
                    state.isCompleted = true
                    return self.metrics(of: playback, received: playback.offset)
                }
                if let metrics { finish(with: failure, metrics: metrics) }
                return
            }
            state.withLock { $0.playback?.offset += Int64(chunk.count) }
            if !chunk.isEmpty { handler?.transportTask(self, didReceive: chunk) }
        case .complete(let error, let metrics):
            finish(with: error, metrics: metrics)
            return
        }
        let next = state.withLock { state -> Bool in
            guard !state.isCompleted, !state.isSuspended || state.isCancelled else {
                state.isStepScheduled = false
                return false
            }
            return true  // Still marked: the next step is this one's.
        }
        if next { DispatchQueue.global().async { [self] in step() } }
    }

    private func metrics(of playback: Playback, received: Int64) -> RequestMetrics {
        var metrics =
            playback.networkMetrics
            ?? RequestMetrics(startDate: playback.startDate, endDate: Date())
        metrics.endDate = Date()
        // Cancelled before its head went out, it answered nothing.
        metrics.statusCode = playback.hasSentHead ? playback.head.statusCode : nil
        metrics.bytesReceived = received
        metrics.responseSource = playback.source
        return metrics
    }

    private func responseHead(_ head: HTTPCacheResponseHead, adding setCookieFields: [String]) -> ResponseHead {
        ResponseHead(
            url: request.url,
            statusCode: head.statusCode,
            httpVersion: "HTTP/1.1",
            headerFields: head.headers.map { (name: $0.name, value: $0.value) }
                + setCookieFields.map { (name: "Set-Cookie", value: $0) }
        )
    }

    private func finish(with error: URLError?, metrics: RequestMetrics) {
        if let refreshesKey { cache.finishRefresh(forKey: refreshesKey) }
        // What the exchange held is let go: the network task (which holds this exchange as its
        // handler: a cycle until now) and the stored body (an open file, for the disk store).
        state.withLock { state in
            state.network = nil
            state.playback = nil
            state.replacement = nil
            state.writer = nil
            state.plan = .gatewayTimeout
            state.resend = nil
            state.prepare = nil
        }
        handler?.transportTask(self, didCompleteWith: error, metrics: metrics)
    }

    /// Commits `writer` as the request's cached-response handler says: as it is, with the
    /// headers it changed, or not at all.
    private func commit(
        _ writer: HTTPCacheEntryWriter,
        asking decision: @Sendable (ResponseHead) async -> ResponseHead?,
        about head: ResponseHead
    ) async {
        guard let stored = await decision(head) else {
            writer.discard()
            return
        }
        writer.commit(statusCode: stored.statusCode, responseHeaders: HTTPCachePolicy.storableHeaders(stored.headers))
    }

    // MARK: - TransportEventHandler (the network task's events)

    func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse) {
        transportTask(task, didReceive: ResponseHead(response))
    }

    func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {
        guard let queue else { return receive(head, from: task) }
        queue.async { [self] in receive(head, from: task) }
    }

    func transportTask(_ task: any TransportTask, didReceive data: Data) {
        guard let queue else { return receive(data) }
        // The task is suspended before the chunk that holds it is queued, so that the chunk's
        // handling, which may resume it, comes after the suspension.
        // A task that cannot pause its transfer (FoundationNetworking's) would only hold its
        // events in memory, and fail past its limit: the cache stops storing the body instead,
        // and the queue, with no disk to wait for, catches up.
        let canPause = URLSessionTransport.suspensionPauses(task)
        let (chunk, holds) = state.withLock { state -> (Int, Bool) in
            let chunk = state.nextChunk
            state.nextChunk += 1
            state.queuedBytes += data.count
            guard state.queuedBytes > Self.maximumQueuedBytes, state.heldForQueue == nil else { return (chunk, false) }
            guard canPause else {
                state.stopsStoring = true
                return (chunk, false)
            }
            state.heldForQueue = chunk
            return (chunk, true)
        }
        if holds { task.suspend() }
        queue.async { [self] in
            // Cancelled, or ended: what was queued is dropped, neither stored nor passed on.
            if !state.withLock({ $0.isCancelled || $0.isCompleted }) { receive(data) }
            let resumes = state.withLock { state -> Bool in
                state.queuedBytes -= data.count
                guard let held = state.heldForQueue, chunk >= held,
                    state.queuedBytes <= Self.maximumQueuedBytes / 2
                else { return false }
                state.heldForQueue = nil
                // Suspended by the caller meanwhile: its resume() resumes the task.
                return !state.isSuspended
            }
            if resumes { resumeNetwork(task) }
        }
    }

    func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics) {
        guard let queue else { return complete(with: error, metrics: metrics) }
        queue.async { [self] in complete(with: error, metrics: metrics) }
    }

    private func receive(_ head: ResponseHead, from task: any TransportTask) {
        // A background refresh's response reaches no request: its cookies are stored here.
        if handler == nil, let cookies {
            let fields = head.setCookieFields
            if !fields.isEmpty { cookies.store(setCookieFields: fields, from: head.url ?? request.url) }
        }
        let now = Date()
        let cacheHead = HTTPCacheResponseHead(head)
        cache.invalidate(after: request, response: cacheHead)
        let (plan, requestTime, isCancelled) = state.withLock { ($0.plan, $0.requestTime, $0.isCancelled) }
        cache.freshen(after: request, response: cacheHead, requestTime: requestTime, responseTime: now)
        if !isCancelled, case .network(let stored?) = plan, head.statusCode == 304 {
            if let merged = cache.mergeNotModified(
                cacheHead,
                into: stored,
                for: request,
                requestTime: requestTime,
                responseTime: now,
                now: now
            ) {
                state.withLock { $0.replacement = (merged, .revalidatedCache, head.setCookieFields) }
            } else if state.withLock({ $0.resend != nil }) {
                // A 304 for another representation than the one stored (which is gone now):
                // the request goes again as its caller made it.
                state.withLock { $0.isResending = true }
            }
            if state.withLock({ $0.replacement != nil || $0.isResending }) {
                // Nothing more of this exchange is needed: it ends now (its body is dropped).
                task.cancel()
                return
            }
        }
        if !isCancelled, HTTPCache.staleIfErrorStatuses.contains(head.statusCode),
            let stale = cache.staleResponseOnError(for: request, now: now)
        {
            state.withLock { $0.replacement = (stale, .cache, []) }
            // The error's body is not waited for (a server could stream it without end).
            task.cancel()
            return
        }
        let writer = cache.writer(for: request, response: cacheHead, requestTime: requestTime, responseTime: now)
        state.withLock { state in
            state.writer = writer
            state.networkHead = writer == nil ? nil : head
            state.hasForwardedHead = true
        }
        handler?.transportTask(self, didReceive: head)
    }

    private func receive(_ data: Data) {
        let (writer, dropped, isReplaced) = state.withLock {
            state -> (HTTPCacheEntryWriter?, HTTPCacheEntryWriter?, Bool) in
            var dropped: HTTPCacheEntryWriter?
            if state.stopsStoring {
                dropped = state.writer
                state.writer = nil
            }
            return (state.writer, dropped, state.replacement != nil || state.isResending)
        }
        // Its file is removed outside the lock, which the transport's thread takes for each chunk.
        dropped?.discard()
        guard !isReplaced else { return }
        writer?.write(data)
        handler?.transportTask(self, didReceive: data)
    }

    func transportTask(_ task: any TransportTask, didSendBodyBytes totalBytesSent: Int64, of totalBytesExpected: Int64?)
    {
        // In order with the other events: through the queue when there is one.
        guard let queue else {
            return handler?.transportTask(self, didSendBodyBytes: totalBytesSent, of: totalBytesExpected) ?? ()
        }
        queue.async { [self] in
            handler?.transportTask(self, didSendBodyBytes: totalBytesSent, of: totalBytesExpected)
        }
    }

    private func complete(with error: URLError?, metrics: RequestMetrics) {
        let (writer, networkHead, isCancelled) = state.withLock { ($0.writer, $0.networkHead, $0.isCancelled) }
        if let writer {
            // Cancelled: the pieces queued since were dropped, so even a completion without an
            // error (the network had ended before the cancel reached it) ends a body cut short.
            if error != nil || isCancelled {
                writer.discard()
            } else if let decision, let networkHead {
                // The handler runs off the transport's thread, and the request's completion
                // waits for the entry it decides on: a request made next finds it stored.
                Task { [self] in
                    await commit(writer, asking: decision, about: networkHead)
                    networkCompleted(with: error, metrics: metrics)
                }
                return
            } else {
                writer.commit()
            }
        }
        networkCompleted(with: error, metrics: metrics)
    }

    /// The network exchange ended (its body stored or not): play a replacement, send again, or
    /// hand the completion on.
    private func networkCompleted(with error: URLError?, metrics: RequestMetrics) {
        enum Action {
            case none
            case forward
            case play
            case resend
        }
        let now = Date()
        let (replacement, hasForwardedHead, isCancelled, isResending) = state.withLock {
            ($0.replacement, $0.hasForwardedHead, $0.isCancelled, $0.isResending)
        }
        var played = replacement
        // The network failed before any answer: a stale response within stale-if-error will do.
        if played == nil, !isResending, let error, error.code != .cancelled, !hasForwardedHead, !isCancelled,
            let stale = cache.staleResponseOnError(for: request, now: now)
        {
            played = (stale, .cache, [])
        }
        let action = state.withLock { state -> Action in
            state.network = nil
            state.writer = nil
            // Cancelled while waiting to play: the cancellation was reported already.
            guard !state.isCompleted else { return .none }
            if state.isResending, !state.isCancelled, state.resend != nil {
                state.isResending = false
                state.plan = .network(revalidating: nil)
                return .resend
            }
            // A background refresh has stored what it got: nobody waits for a playback.
            guard let played, handler != nil, !state.isCancelled else {
                state.isCompleted = true
                return .forward
            }
            state.playback = Playback(
                head: played.response.head,
                body: played.response.body,
                source: played.source,
                networkMetrics: metrics,
                startDate: metrics.startDate,
                setCookieFields: played.setCookieFields
            )
            return scheduleStep(&state) ? .play : .none
        }
        switch action {
        case .none:
            break
        case .forward:
            // A cancelled replacement or resend reports the cancellation, not the dropped exchange.
            finish(with: isCancelled && error == nil ? URLError(.cancelled) : error, metrics: metrics)
        case .play:
            DispatchQueue.global().async { [self] in step() }
        case .resend:
            guard let resend = state.withLock({ $0.resend }) else { return }
            let network = resend(self)
            enum Next { case run, wait, drop }
            let next = state.withLock { state -> Next in
                // Cancelled meanwhile (the cancel was reported by a step): the task never runs.
                guard !state.isCompleted, !state.isCancelled else { return .drop }
                state.network = network
                return state.isSuspended ? .wait : .run
            }
            switch next {
            case .run: resumeNetwork(network)
            case .wait: break
            case .drop: network.cancel()
            }
        }
    }
}
