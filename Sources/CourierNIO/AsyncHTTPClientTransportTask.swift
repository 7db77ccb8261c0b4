import AsyncHTTPClient
@_spi(CourierTransport) import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt over AsyncHTTPClient, reporting to a ``TransportEventHandler``.
///
/// Courier follows redirects here itself (AsyncHTTPClient's own following is off): each hop is
/// one AsyncHTTPClient request with a ``HopDelegate`` of its own, and every `Location` goes
/// through ``RedirectPolicy`` (and so ``URLValidation``) before a connection is made to it.
/// Events from a hop that is over (drained, cut short, cancelled) are told apart by its number
/// and ignored.
///
/// Thread-safe: the mutable state is in one `NIOLockedValueBox`; AsyncHTTPClient calls a hop's
/// delegate methods on one event loop, in order, and the caller may resume, suspend or cancel
/// from any thread.
final class AsyncHTTPClientTransportTask: TransportTask {
    /// The most bytes of a redirect's own body read (and dropped) so that its connection can be
    /// used again; past this, that connection is closed instead.
    static let redirectBodyDrainLimit = 64 * 1024

    private struct State {
        enum Phase {
            /// Not resumed yet.
            case idle
            /// Running; `task` is AsyncHTTPClient's handle.
            case running(HTTPClient.Task<Void>?)
            /// Completed; nothing more is reported.
            case completed
        }

        var phase: Phase = .idle
        var isSuspended = false
        /// Set by `cancel()` while running: no further read is granted, even before the
        /// cancellation reaches the event loop.
        var isCancelling = false
        /// The body read waiting for a resume, while suspended.
        var pendingDemand: EventLoopPromise<Void>?
        var startDate: Date?
        var responseDate: Date?
        /// When bytes last moved (or the caller resumed): the idle timeout counts from here.
        var lastActivity = NIODeadline.now()
        /// The pending check of the idle timeout.
        var idleCheck: NIOScheduledCallback?
        /// The `lastActivity` a check found past the deadline; the attempt times out if a second
        /// check, a loop turn later, finds it unchanged.
        var idleTimeoutGraceAt: NIODeadline?
        /// The hop running: 0 for the request itself, one more for each redirect followed.
        var hop = 0
        /// The request the current hop sent.
        var currentRequest: HTTPClient.Request?
        /// The request a redirect leads to, set while the redirect's own body is drained.
        var pendingRedirect: HTTPClient.Request?
        /// Bytes of the redirect's body dropped so far.
        var drainedBytes = 0
        /// Body bytes sent in the current hop (a redirect that resends the body counts afresh).
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
        var statusCode: Int?
        var networkProtocolName: String?
        var currentURL: URL?
        /// The loop the hops prefer, chosen when the task starts.
        var eventLoopPreference: HTTPClient.EventLoopPreference = .indifferent
        /// Whether the task is counted in flight by the transport's ``EventLoopSteering``: from
        /// its start to its completion.
        var isCountedInFlight = false
    }

    private let client: HTTPClient
    private let steering: EventLoopSteering
    /// What to send; `nil` for a `URLRequest` without a URL, which fails at once.
    private let head: RequestHead?
    /// How many redirects this attempt follows; 0 delivers a redirect as the response.
    private let maximumRedirects: Int
    /// The body to send: the caller's, else the `httpBodyStream` (read once) or `httpBody` of the
    /// `URLRequest` the head was read from.
    private let body: RequestBody?
    /// Held until AsyncHTTPClient lets go of the task after its completion: a request in flight
    /// stays alive through it (the request lets go of its task when the attempt ends, so nothing
    /// is kept in a cycle after that).
    private let eventHandler: any TransportEventHandler
    private let state = NIOLockedValueBox(State())
    private let failsImmediately: Bool
    /// The request's `timeoutInterval`: the longest the attempt may go without sending or
    /// receiving a byte, as URLSession reads it (and a read timeout in a client passed in applies too).
    private let idleTimeout: TimeAmount?

    init(
        client: HTTPClient,
        head: RequestHead?,
        body: RequestBody?,
        eventHandler: any TransportEventHandler,
        isInvalidated: Bool,
        maximumRedirects: Int,
        steering: EventLoopSteering
    ) {
        self.client = client
        self.steering = steering
        self.head = head
        self.maximumRedirects = maximumRedirects
        if let body {
            self.body = body
        } else if let stream = head?.httpBodyStream {
            let length = head?.headers.value(for: "Content-Length").flatMap { Int64($0) }
            self.body = .stream(readingOnce: stream, length: length)
        } else {
            self.body = head?.httpBody.map { .data($0) }
        }
        self.eventHandler = eventHandler
        self.failsImmediately = isInvalidated
        let interval = head?.timeoutInterval ?? 0
        self.idleTimeout =
            interval > 0 && interval < Double(Int64.max / 1_000_000_000)
            ? .nanoseconds(Int64(interval * 1_000_000_000)) : nil
        state.withLockedValue { $0.currentURL = head?.url }
    }

    // MARK: - TransportTask

    func resume() {
        enum Action {
            case none
            case start
            case releaseDemand(EventLoopPromise<Void>?)
        }
        let action = state.withLockedValue { state -> Action in
            switch state.phase {
            case .idle:
                state.phase = .running(nil)
                state.startDate = Date()
                state.lastActivity = .now()
                state.isSuspended = false
                return .start
            case .running:
                guard state.isSuspended else { return .none }
                state.isSuspended = false
                state.lastActivity = .now()
                defer { state.pendingDemand = nil }
                return .releaseDemand(state.pendingDemand)
            case .completed:
                return .none
            }
        }
        switch action {
        case .none: break
        case .start: start()
        case .releaseDemand(let promise): promise?.succeed()
        }
    }

    func suspend() {
        state.withLockedValue { state in
            switch state.phase {
            case .idle, .running: state.isSuspended = true  // Remembered while idle, for the start.
            case .completed: break
            }
        }
    }

    func cancel() {
        enum Action {
            case none
            case cancelTask(HTTPClient.Task<Void>?, EventLoopPromise<Void>?)
            case completeCancelled
        }
        let action = state.withLockedValue { state -> Action in
            switch state.phase {
            case .idle:
                state.phase = .completed
                return .completeCancelled
            case .running(let task):
                state.isCancelling = true
                defer { state.pendingDemand = nil }
                return .cancelTask(task, state.pendingDemand)
            case .completed:
                return .none
            }
        }
        switch action {
        case .none:
            break
        case .completeCancelled:
            let now = Date()
            eventHandler.transportTask(
                self,
                didCompleteWith: URLError(.cancelled),
                metrics: RequestMetrics(startDate: now, endDate: now)
            )
        case .cancelTask(let task, let promise):
            // A body read held for a suspension must not keep the cancellation waiting.
            promise?.fail(HTTPClientError.cancelled)
            if let task {
                task.cancel()
            } else {
                complete(with: URLError(.cancelled))
            }
        }
    }

    /// Completes with `error` on an event loop, never inside the caller's `resume()`: the
    /// completion runs the request's handlers, which must not run under the caller's locks.
    private func completeSoon(with error: URLError) {
        client.eventLoopGroup.any().execute { [self] in complete(with: error) }
    }

    private func start() {
        guard !failsImmediately else {
            completeSoon(with: URLError(.cancelled))
            return
        }
        guard let head else {
            completeSoon(with: URLError(.badURL, userInfo: [NSUnderlyingErrorKey: HTTPClientError.invalidURL]))
            return
        }
        // Checked here too, not only by the session: SwiftNIO traps on a port above 65535, and a
        // transport may be driven without a session.
        if !head.isURLChecked, let problem = URLValidation.problem(with: head.url) {
            completeSoon(with: Self.carrying(problem, as: .badURL))
            return
        }
        let request: HTTPClient.Request
        do {
            request = try Self.makeRequest(from: head, body: body, eventLoopGroup: client.eventLoopGroup)
        } catch {
            completeSoon(with: URLError(.badURL, userInfo: [NSUnderlyingErrorKey: error]))
            return
        }
        let preference = steering.begin()
        let isRunning = state.withLockedValue { state -> Bool in
            guard case .running = state.phase else { return false }
            state.currentRequest = request
            state.eventLoopPreference = preference
            state.isCountedInFlight = true
            return true
        }
        // Completed meanwhile (cancelled): nothing to send, and `complete(with:)` counted nothing.
        guard isRunning else {
            steering.end()
            return
        }
        if let eventLoop = execute(request, hop: 0) { checkIdleTimeout(on: eventLoop) }
    }

    /// Sends `request` as hop number `hop`; returns the event loop it runs on, or `nil` when the
    /// attempt ended meanwhile (the new request is then cancelled at once).
    @discardableResult
    private func execute(_ request: HTTPClient.Request, hop: Int) -> (any EventLoop)? {
        let task = client.execute(
            request: request,
            delegate: HopDelegate(owner: self, hop: hop),
            eventLoop: state.withLockedValue { $0.eventLoopPreference }
        )
        // AsyncHTTPClient fails some tasks without telling the delegate (a request it cannot
        // build, a client shut down): without this the attempt never ends. `complete(with:)` runs
        // once, so a failure the delegate did report wins.
        task.futureResult.whenFailure { [self] error in self.hop(hop, didFailWith: error) }
        let cancelledMeanwhile = state.withLockedValue { state -> Bool in
            guard case .running = state.phase, state.hop == hop, !state.isCancelling else { return true }
            state.phase = .running(task)
            return false
        }
        if cancelledMeanwhile {
            task.cancel()
            return nil
        }
        return task.eventLoop
    }

    /// A `URLError` of `code` that carries `error`, so the request reports the ``CourierError``
    /// itself rather than a transport failure.
    private static func carrying(_ error: CourierError, as code: URLError.Code) -> URLError {
        URLError(code, userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: error.localizedDescription])
    }

    /// Fails the attempt with `URLError(.timedOut)` once nothing has moved for ``idleTimeout``,
    /// else checks again when it next could. A suspended attempt is paused by its caller, not
    /// idle, so its clock restarts on resume.
    private func checkIdleTimeout(on eventLoop: any EventLoop) {
        guard let idleTimeout else { return }
        enum Action {
            case none
            case checkAgain(at: NIODeadline)
            case timeOut(HTTPClient.Task<Void>?)
        }
        let now = NIODeadline.now()
        let action = state.withLockedValue { state -> Action in
            guard case .running(let task) = state.phase, !state.isCancelling else { return .none }
            if state.isSuspended { return .checkAgain(at: now + idleTimeout) }
            let deadline = state.lastActivity + idleTimeout
            guard deadline <= now else {
                state.idleTimeoutGraceAt = nil
                return .checkAgain(at: deadline)
            }
            // The loop may have been busy with other work past the deadline, with this
            // attempt's bytes waiting in its socket: look once more after the loop has read it.
            if let grace = state.idleTimeoutGraceAt, grace == state.lastActivity { return .timeOut(task) }
            state.idleTimeoutGraceAt = state.lastActivity
            return .checkAgain(at: now + .milliseconds(10))
        }
        switch action {
        case .none:
            break
        case .checkAgain(let deadline):
            // A scheduled callback rather than a task: no promise and future per request.
            let check = try? eventLoop.scheduleCallback(at: deadline, handler: IdleCheck(task: self))
            state.withLockedValue { $0.idleCheck = check }
        case .timeOut(let task):
            let seconds = Double(idleTimeout.nanoseconds) / 1e9
            complete(
                with: URLError(
                    .timedOut,
                    userInfo: [NSLocalizedDescriptionKey: "The request timed out (no data for \(seconds) s)."]
                )
            )
            task?.cancel()
        }
    }

    /// Runs the next idle check; weak, so a pending check does not keep a finished attempt alive.
    private struct IdleCheck: NIOScheduledCallbackHandler, Sendable {
        weak let task: AsyncHTTPClientTransportTask?

        func handleScheduledCallback(eventLoop: some EventLoop) {
            task?.checkIdleTimeout(on: eventLoop)
        }
    }

    static func makeRequest(
        from head: RequestHead,
        body: RequestBody?,
        eventLoopGroup: any EventLoopGroup
    ) throws -> HTTPClient.Request {
        var headers = NIOHTTP1.HTTPHeaders()
        headers.reserveCapacity(head.headers.count)
        for header in head.headers {
            headers.add(name: header.name, value: header.value)
        }
        let clientBody: HTTPClient.Body?
        if let body {
            if let data = body.data {
                clientBody = .bytes(data)
            } else {
                // AsyncHTTPClient sets Content-Length or chunked from the length given here.
                headers.remove(name: "Content-Length")
                clientBody = .stream(contentLength: body.length) { writer in
                    BodyPump.start(body, writer: writer, eventLoop: eventLoopGroup.any())
                }
            }
        } else {
            clientBody = nil
        }
        return try HTTPClient.Request(
            url: head.url,
            method: NIOHTTP1.HTTPMethod(rawValue: head.method.rawValue),
            headers: headers,
            body: clientBody
        )
    }

    // MARK: - Hops

    /// Receives one hop's events from AsyncHTTPClient and hands them to the attempt with the
    /// hop's number, so that a hop that is over cannot report into the next one.
    private final class HopDelegate: HTTPClientResponseDelegate {
        typealias Response = Void

        let owner: AsyncHTTPClientTransportTask
        let hop: Int

        init(owner: AsyncHTTPClientTransportTask, hop: Int) {
            self.owner = owner
            self.hop = hop
        }

        func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
            owner.hop(hop, didSend: part.readableBytes)
        }

        func didVisitURL(task: HTTPClient.Task<Void>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
            // Only a client that follows redirects itself (one passed in) visits more than one URL.
            owner.state.withLockedValue { state in
                if state.hop == hop { state.currentURL = request.url }
            }
        }

        func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            owner.hop(hop, didReceive: head, on: task.eventLoop)
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            owner.hop(hop, didReceive: buffer, on: task.eventLoop)
        }

        func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
            owner.hop(hop, didFailWith: error)
        }

        func didFinishRequest(task: HTTPClient.Task<Void>) throws {
            owner.hopDidFinish(hop)
        }
    }

    private func hop(_ hop: Int, didSend bytes: Int) {
        let total = state.withLockedValue { state -> Int64? in
            // Timed out, cancelled, or a hop that is over: a late part.
            guard case .running = state.phase, state.hop == hop else { return nil }
            state.bytesSent += Int64(bytes)
            state.lastActivity = .now()
            return state.bytesSent
        }
        guard let total else { return }
        let expected = body?.length
        eventHandler.transportTask(self, didSendBodyBytes: total, of: expected)
    }

    private func hop(
        _ hop: Int,
        didReceive head: HTTPResponseHead,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<Void> {
        enum Action {
            case ignore
            case deliver(URL?)
            case drainRedirect
            case fail(URLError)
        }
        let location = maximumRedirects > 0 ? head.headers.first(name: "Location") : nil
        let action = state.withLockedValue { state -> Action in
            guard case .running = state.phase, state.hop == hop, !state.isCancelling else { return .ignore }
            state.lastActivity = .now()
            guard let location, let request = state.currentRequest else { return .deliver(state.currentURL) }
            let decision = RedirectPolicy.nextHop(
                status: Int(head.status.code),
                location: location,
                method: request.method.rawValue,
                from: request.url
            )
            switch decision {
            case .deliver:
                return .deliver(state.currentURL)
            case .fail(let error):
                return .fail(Self.carrying(error, as: .badURL))
            case .follow(let next):
                // A body that can be read only once cannot go again: the redirect is the answer.
                if !next.dropsBody, let body, !body.isReplayable { return .deliver(state.currentURL) }
                // The limit alone ends a loop, as on URLSession: the same URL may rightly come
                // twice (a POST answered 303 to itself).
                guard state.hop < maximumRedirects else {
                    return .fail(URLError(.httpTooManyRedirects))
                }
                do {
                    state.pendingRedirect = try Self.request(following: next, from: request)
                } catch {
                    return .fail(URLError(.badURL, userInfo: [NSUnderlyingErrorKey: error]))
                }
                state.drainedBytes = 0
                return .drainRedirect
            }
        }
        switch action {
        case .ignore:
            return eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        case .fail(let error):
            complete(with: error)
            return eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        case .drainRedirect:
            return eventLoop.makeSucceededVoidFuture()
        case .deliver(let url):
            state.withLockedValue { state in
                state.responseDate = Date()
                state.statusCode = Int(head.status.code)
                state.networkProtocolName = Self.protocolName(of: head.version)
            }
            if let url {
                // Parts, not an HTTPURLResponse: FoundationNetworking's costs more than the whole
                // request, and is built only if someone asks for it (see ResponseHead).
                var fields: [(name: String, value: String)] = []
                fields.reserveCapacity(head.headers.count)
                for (name, value) in head.headers { fields.append((name, value)) }
                let responseHead = ResponseHead(
                    url: url,
                    statusCode: Int(head.status.code),
                    httpVersion: head.version == .http1_1
                        ? "HTTP/1.1" : "HTTP/\(head.version.major).\(head.version.minor)",
                    headerFields: fields
                )
                eventHandler.transportTask(self, didReceive: responseHead)
            }
            return demand(on: eventLoop)
        }
    }

    /// The request a redirect leads to: `next`'s URL and method, the body kept unless the method
    /// became GET, and the credential headers left behind when it leaves the origin.
    private static func request(
        following next: RedirectPolicy.Hop,
        from request: HTTPClient.Request
    ) throws -> HTTPClient.Request {
        var headers = request.headers
        if next.dropsBody {
            for name in RedirectPolicy.bodyHeaders { headers.remove(name: name) }
        }
        if next.leavesOrigin {
            for name in RedirectPolicy.credentialHeaders { headers.remove(name: name) }
        }
        // AsyncHTTPClient sets Host from the URL; one kept from the last hop would name the wrong host.
        headers.remove(name: "Host")
        return try HTTPClient.Request(
            url: next.url,
            method: NIOHTTP1.HTTPMethod(rawValue: next.method),
            headers: headers,
            body: next.dropsBody ? nil : request.body,
            tlsConfiguration: request.tlsConfiguration
        )
    }

    /// The ALPN-style name of `version`, as URLSession's metrics give it.
    private static func protocolName(of version: HTTPVersion) -> String {
        switch version {
        case .http1_1: return "http/1.1"
        case .http2: return "h2"
        default: return version.major == 2 ? "h2" : "http/\(version.major).\(version.minor)"
        }
    }

    private func hop(_ hop: Int, didReceive buffer: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        enum Action {
            case ignore
            case drain
            case cutRedirectShort(HTTPClient.Request)
            case deliver
        }
        let action = state.withLockedValue { state -> Action in
            // After completion (a cancel from another thread) nothing more may reach the handler.
            guard case .running = state.phase, state.hop == hop else { return .ignore }
            guard let next = state.pendingRedirect else { return .deliver }
            state.lastActivity = .now()
            state.drainedBytes += buffer.readableBytes
            guard state.drainedBytes > Self.redirectBodyDrainLimit else { return .drain }
            return .cutRedirectShort(next)
        }
        switch action {
        case .ignore:
            return eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        case .drain:
            return eventLoop.makeSucceededVoidFuture()
        case .cutRedirectShort(let next):
            // Failing the read ends this hop (its late error is ignored: it is no longer current).
            startNextHop(with: next, after: hop)
            return eventLoop.makeFailedFuture(HTTPClientError.cancelled)
        case .deliver:
            // Deliver first, then ask for more under one lock: a suspend() made while handling this
            // chunk already holds back the next read.
            // The Data shares the buffer's storage (kept alive by it) rather than copying every byte.
            let data =
                buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy)
                ?? Data(buffer.readableBytesView)
            eventHandler.transportTask(self, didReceive: data)
            return demand(on: eventLoop, receivedBytes: buffer.readableBytes)
        }
    }

    private func hop(_ hop: Int, didFailWith error: any Error) {
        let isCurrent = state.withLockedValue { $0.hop == hop }
        guard isCurrent else { return }
        complete(with: Self.urlError(for: error))
    }

    private func hopDidFinish(_ hop: Int) {
        enum Action {
            case ignore
            case complete
            case follow(HTTPClient.Request)
        }
        let action = state.withLockedValue { state -> Action in
            guard state.hop == hop else { return .ignore }
            return state.pendingRedirect.map(Action.follow) ?? .complete
        }
        switch action {
        case .ignore: break
        case .complete: complete(with: nil)
        case .follow(let next): startNextHop(with: next, after: hop)
        }
    }

    /// Moves on from hop `hop` to the redirect's request, unless the attempt ended meanwhile.
    private func startNextHop(with request: HTTPClient.Request, after hop: Int) {
        enum Action {
            case none
            case start(Int)
            /// A cancel() reached the hop that just ended, too late for AsyncHTTPClient to report
            /// it (a finished task ignores a cancel): the attempt ends here.
            case completeCancelled
        }
        let action = state.withLockedValue { state -> Action in
            guard case .running = state.phase, state.hop == hop else { return .none }
            guard !state.isCancelling else { return .completeCancelled }
            state.hop += 1
            // No AsyncHTTPClient task until the next one starts: a cancel meanwhile completes at once.
            state.phase = .running(nil)
            state.pendingRedirect = nil
            state.currentRequest = request
            state.currentURL = request.url
            state.bytesSent = 0
            state.lastActivity = .now()
            return .start(state.hop)
        }
        switch action {
        case .none: break
        case .start(let nextHop): execute(request, hop: nextHop)
        case .completeCancelled: complete(with: URLError(.cancelled))
        }
    }

    /// Counts `receivedBytes`, then returns a succeeded future to read on or, while suspended, one
    /// that succeeds on resume.
    private func demand(on eventLoop: any EventLoop, receivedBytes: Int = 0) -> EventLoopFuture<Void> {
        state.withLockedValue { state in
            state.bytesReceived += Int64(receivedBytes)
            if receivedBytes > 0 { state.lastActivity = .now() }
            if state.isCancelling { return eventLoop.makeFailedFuture(HTTPClientError.cancelled) }
            if case .completed = state.phase { return eventLoop.makeFailedFuture(HTTPClientError.cancelled) }
            guard state.isSuspended else { return eventLoop.makeSucceededVoidFuture() }
            let promise = eventLoop.makePromise(of: Void.self)
            state.pendingDemand = promise
            return promise.futureResult
        }
    }

    private func complete(with error: URLError?) {
        let endDate = Date()
        let snapshot = state.withLockedValue { state -> State? in
            if case .completed = state.phase { return nil }
            state.phase = .completed
            defer { state.pendingDemand = nil }
            return state
        }
        guard let snapshot else { return }
        // Before the request hears of it: the next request its caller sends sees this one ended.
        if snapshot.isCountedInFlight { steering.end() }
        // A read held for a suspension is released (as failed) so no promise is left pending.
        snapshot.pendingDemand?.fail(HTTPClientError.cancelled)
        snapshot.idleCheck?.cancel()
        let startDate = snapshot.startDate ?? endDate
        let metrics = RequestMetrics(
            startDate: startDate,
            endDate: endDate,
            timeToFirstByte: snapshot.responseDate.map { $0.timeIntervalSince(startDate) },
            bytesSent: snapshot.bytesSent,
            bytesReceived: snapshot.bytesReceived,
            statusCode: snapshot.statusCode,
            remoteAddress: nil,
            networkProtocolName: snapshot.networkProtocolName
        )
        eventHandler.transportTask(self, didCompleteWith: error, metrics: metrics)
    }

    /// AsyncHTTPClient's and SwiftNIO's errors as the `URLError` URLSession reports for the same failure.
    static func urlError(for error: any Error) -> URLError {
        let code: URLError.Code
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .cancelled, .alreadyShutdown: code = .cancelled
            case .connectTimeout, .deadlineExceeded, .readTimeout, .writeTimeout, .tlsHandshakeTimeout: code = .timedOut
            case .remoteConnectionClosed, .bodyLengthMismatch: code = .networkConnectionLost
            case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath: code = .badURL
            case .redirectLimitReached, .redirectCycleDetected: code = .httpTooManyRedirects
            default: code = .unknown
            }
        case let error as NIOConnectionError:
            // No address to try at all means the name did not resolve.
            let unresolved = error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
            code = unresolved ? .cannotFindHost : .cannotConnectToHost
        case let error as ChannelError:
            switch error {
            case .connectTimeout: code = .timedOut
            case .ioOnClosedChannel, .eof, .outputClosed, .alreadyClosed: code = .networkConnectionLost
            default: code = .unknown
            }
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            code = .cannotConnectToHost
        case let error as IOError where error.errnoCode == ECONNRESET || error.errnoCode == EPIPE:
            code = .networkConnectionLost
        case let error as BodyPump.Failure:
            return URLError(
                .cannotOpenFile,
                userInfo: [NSUnderlyingErrorKey: error.underlying, NSLocalizedDescriptionKey: "\(error.underlying)"]
            )
        case let error as HTTPParserError:
            switch error {
            case .invalidEOFState, .closedConnection:
                // The connection ended in the middle of a response: lost, as URLSession says.
                code = .networkConnectionLost
            default:
                // Not HTTP as it must be (a header block too large, conflicting lengths, a bad
                // status line): the server's fault, which trying again will not mend.
                return carrying(
                    .invalidResponse(reason: invalidResponseReason(error), underlying: error),
                    as: .badServerResponse
                )
            }
        case let error as NIOHTTPDecompression.DecompressionError:
            // A compressed body that does not inflate, as URLSession reports one.
            code = .cannotDecodeContentData
            return URLError(
                code,
                userInfo: [
                    NSUnderlyingErrorKey: error,
                    NSLocalizedDescriptionKey: "The response body could not be decompressed (\(error)).",
                ]
            )
        case let error as NIOSSLError:
            code = isCertificateRejection(error) ? .serverCertificateUntrusted : .secureConnectionFailed
        case let error as NIOSSLExtraError:
            code = error == .failedToValidateHostname ? .serverCertificateUntrusted : .secureConnectionFailed
        default:
            let name = String(describing: type(of: error))
            code = name.contains("SSL") || name.contains("TLS") ? .secureConnectionFailed : .unknown
        }
        return URLError(code, userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: "\(error)"])
    }

    /// What a parser error means, in words that name no header value.
    private static func invalidResponseReason(_ error: HTTPParserError) -> String {
        switch error {
        case .headerOverflow: return "its header block is larger than the parser's limit (80 KiB)"
        case .invalidContentLength, .unexpectedContentLength:
            return "its Content-Length is invalid, conflicting, or beside Transfer-Encoding"
        case .invalidStatus, .invalidVersion, .invalidConstant: return "its status line is malformed"
        case .invalidHeaderToken, .invalidCharactersUsed, .lfExpected: return "its header block is malformed"
        case .invalidChunkSize: return "its chunked body is malformed"
        default: return "the parser reported \(error)"
        }
    }

    /// Whether a TLS failure is the client refusing the server's certificate (untrusted, expired,
    /// wrong host), which URLSession reports as `.serverCertificateUntrusted`, rather than a
    /// handshake that failed for another reason (`.secureConnectionFailed`).
    private static func isCertificateRejection(_ error: NIOSSLError) -> Bool {
        switch error {
        case .unableToValidateCertificate, .noCertificateToValidate, .cannotMatchULabel, .cannotFindPeerIP:
            return true
        case .handshakeFailed(let failure):
            // BoringSSL reports every verification failure, NIOSSL's hostname check included, as
            // this one reason; the stack carries no other structured code for it.
            return "\(failure)".contains("CERTIFICATE_VERIFY_FAILED")
        default:
            return false
        }
    }
}
