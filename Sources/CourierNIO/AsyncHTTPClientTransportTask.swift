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
/// One attempt is one AsyncHTTPClient request (its own redirect following is off): a `3xx` is
/// reported as it is, and Courier's request follows it with a task of its own (see `Redirect`).
///
/// Thread-safe: the mutable state is in one `NIOLockedValueBox`; AsyncHTTPClient calls the
/// delegate's methods on one event loop, in order, and the caller may resume, suspend or cancel
/// from any thread.
final class AsyncHTTPClientTransportTask: TransportTask, IdleWatched {
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
        /// The `lastActivity` a check found past the deadline, and when: the attempt times out if
        /// a second check on its own loop, 10 ms later, finds it unchanged.
        var idleTimeoutGrace: (activity: NIODeadline, since: NIODeadline)?
        /// Body bytes sent so far.
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
        var statusCode: Int?
        var networkProtocolName: String?
        /// The loop the request prefers, chosen when the task starts.
        var eventLoopPreference: HTTPClient.EventLoopPreference = .indifferent
        /// Where the task is counted in flight by the transport's ``EventLoopSteering``: from
        /// its start to its completion.
        var steeringTicket: EventLoopSteering.Ticket?
        /// Whether a refused certificate is being looked at again (see `CertificateDiagnosis`).
        var isDiagnosing = false
    }

    private let client: HTTPClient
    private let steering: EventLoopSteering
    /// Times the attempt out when it goes ``idleTimeout`` without moving a byte.
    private let idleWatch: IdleWatch
    /// What to send; `nil` for a `URLRequest` without a URL, which fails at once.
    private let head: RequestHead?
    /// The body to send: the caller's, else the `httpBodyStream` (read once) or `httpBody` of the
    /// `URLRequest` the head was read from.
    private let body: RequestBody?
    /// Held until AsyncHTTPClient lets go of the task after its completion: a request in flight
    /// stays alive through it (the request lets go of its task when the attempt ends, so nothing
    /// is kept in a cycle after that).
    private let eventHandler: any TransportEventHandler
    private let state = NIOLockedValueBox(State())
    private let failsImmediately: Bool
    /// Why the attempt fails as soon as it starts, before connecting: trust settings the
    /// transport could not read.
    private let failure: CourierError?
    /// The session's trust settings for this host, when it has any (see `ServerTrustClients`).
    private let tlsConfiguration: TLSConfiguration?
    /// Where a refused chain is looked at again to say why; `nil` when it must not be (the
    /// transport's connections go through a proxy or a DNS override, or are not known).
    private let diagnoses: CertificateDiagnosis.Cache?
    /// The request's `timeoutInterval`: the longest the attempt may go without sending or
    /// receiving a byte, as URLSession reads it (and a read timeout in a client passed in applies too).
    private let idleTimeout: TimeAmount?

    init(
        client: HTTPClient,
        head: RequestHead?,
        body: RequestBody?,
        eventHandler: any TransportEventHandler,
        isInvalidated: Bool,
        steering: EventLoopSteering,
        idleWatch: IdleWatch,
        tlsConfiguration: TLSConfiguration? = nil,
        diagnoses: CertificateDiagnosis.Cache? = nil,
        failure: CourierError? = nil
    ) {
        self.client = client
        self.tlsConfiguration = tlsConfiguration
        self.diagnoses = diagnoses
        self.failure = failure
        self.steering = steering
        self.idleWatch = idleWatch
        self.head = head
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
                // AsyncHTTPClient's task has failed already: nothing there to cancel.
                if state.isDiagnosing { return .cancelTask(nil, nil) }
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
        if let failure {
            completeSoon(with: Self.carrying(failure, as: .serverCertificateUntrusted))
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
            request = try Self.makeRequest(
                from: head,
                body: body,
                eventLoopGroup: client.eventLoopGroup,
                tlsConfiguration: tlsConfiguration
            )
        } catch {
            completeSoon(with: URLError(.badURL, userInfo: [NSUnderlyingErrorKey: error]))
            return
        }
        let ticket = steering.begin(
            to: EventLoopSteering.Origin(request, trustPolicy: head.serverTrustPolicy.map { ObjectIdentifier($0) })
        )
        let isRunning = state.withLockedValue { state -> Bool in
            guard case .running = state.phase else { return false }
            state.eventLoopPreference = ticket.preference
            state.steeringTicket = ticket
            return true
        }
        // Completed meanwhile (cancelled): nothing to send, and `complete(with:)` counted nothing.
        guard isRunning else {
            steering.end(ticket)
            return
        }
        // Watched before the request goes out; a completion that came first is caught in
        // `execute`, after the request is stored.
        if let idleTimeout { idleWatch.watch(self, firstCheck: (.now() + idleTimeout).uptimeNanoseconds) }
        execute(request, reportingAt: head.url)
    }

    /// Sends `request`, unless the attempt ended meanwhile (the new request is then cancelled at
    /// once). `url` is the response's URL.
    private func execute(_ request: HTTPClient.Request, reportingAt url: URL) {
        let task = client.execute(
            request: request,
            delegate: Delegate(owner: self, url: url),
            eventLoop: state.withLockedValue { $0.eventLoopPreference }
        )
        // AsyncHTTPClient fails some tasks without telling the delegate (a request it cannot
        // build, a client shut down): without this the attempt never ends. `complete(with:)` runs
        // once, so a failure the delegate did report wins.
        task.futureResult.whenFailure { [self] error in fail(with: error) }
        let cancelledMeanwhile = state.withLockedValue { state -> Bool in
            guard case .running = state.phase, !state.isCancelling else { return true }
            state.phase = .running(task)
            return false
        }
        if cancelledMeanwhile {
            // Completed between the watch and here: its completion may have come before the watch.
            idleWatch.stopWatching(self)
            task.cancel()
        }
    }

    /// A `URLError` of `code` that carries `error`, so the request reports the ``CourierError``
    /// itself rather than a transport failure.
    private static func carrying(_ error: CourierError, as code: URLError.Code) -> URLError {
        URLError(code, userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: error.localizedDescription])
    }

    /// Answers when to look again, or starts the attempt's timeout once nothing has moved for
    /// ``idleTimeout``; `nil` once the attempt needs no more checks (it ended, is ending, or its
    /// failure is being diagnosed, which has its own bound). A suspended attempt is paused by its
    /// caller, not idle, so its clock restarts on resume.
    func checkIdle(at now: UInt64) -> UInt64? {
        checkIdle(at: NIODeadline.uptimeNanoseconds(now))?.uptimeNanoseconds
    }

    private func checkIdle(at now: NIODeadline) -> NIODeadline? {
        guard let idleTimeout else { return nil }
        enum Verdict {
            case stop
            case checkAgain(at: NIODeadline)
            case confirm(on: any EventLoop, activity: NIODeadline, next: NIODeadline)
            case timeOut(HTTPClient.Task<Void>?)
        }
        let verdict = state.withLockedValue { state -> Verdict in
            guard case .running(let task) = state.phase, !state.isCancelling else { return .stop }
            if state.isDiagnosing { return .stop }
            if state.isSuspended { return .checkAgain(at: now + idleTimeout) }
            let deadline = state.lastActivity + idleTimeout
            guard deadline <= now else {
                state.idleTimeoutGrace = nil
                return .checkAgain(at: deadline)
            }
            // No later than the timeout itself: bytes that arrive before the confirmation restart
            // the clock, and the watch must look again in time for the new deadline.
            let backstop = min(Self.graceBackstop, idleTimeout)
            if let grace = state.idleTimeoutGrace, grace.activity == state.lastActivity {
                // The confirmation on the attempt's loop is due first; this is its backstop, in
                // case that loop never ran it.
                return grace.since + backstop <= now ? .timeOut(task) : .checkAgain(at: grace.since + backstop)
            }
            // Not sent yet: look again shortly.
            guard let task else { return .checkAgain(at: now + Self.grace) }
            state.idleTimeoutGrace = (state.lastActivity, now)
            return .confirm(on: task.eventLoop, activity: state.lastActivity, next: now + backstop)
        }
        switch verdict {
        case .stop:
            return nil
        case .checkAgain(let deadline):
            return deadline
        case .confirm(let eventLoop, let activity, let next):
            // The attempt's loop may have been busy with other work past the deadline, with its
            // bytes waiting in the socket: confirm there, after that loop has had a turn to read them.
            eventLoop.scheduleTask(in: Self.grace) { [self] in confirmIdle(since: activity) }
            return next
        case .timeOut(let task):
            timeOut(task)
            return nil
        }
    }

    /// How long the attempt's loop gets to read bytes that arrived at the deadline.
    private static let grace = TimeAmount.milliseconds(10)
    /// When the watch times out an attempt whose loop never confirmed (sooner for a shorter
    /// timeout).
    private static let graceBackstop = TimeAmount.seconds(1)

    /// On the attempt's loop, a grace period after a check found it idle: times it out if still
    /// nothing has moved since `activity`.
    private func confirmIdle(since activity: NIODeadline) {
        let task = state.withLockedValue { state -> HTTPClient.Task<Void>?? in
            guard case .running(let task) = state.phase, !state.isCancelling, !state.isDiagnosing,
                !state.isSuspended, state.lastActivity == activity
            else { return nil }
            return .some(task)
        }
        guard let task else { return }
        timeOut(task)
    }

    private func timeOut(_ task: HTTPClient.Task<Void>?) {
        guard let idleTimeout else { return }
        let seconds = Double(idleTimeout.nanoseconds) / 1e9
        complete(
            with: URLError(
                .timedOut,
                userInfo: [NSLocalizedDescriptionKey: "The request timed out (no data for \(seconds) s)."]
            )
        )
        task?.cancel()
    }

    static func makeRequest(
        from head: RequestHead,
        body: RequestBody?,
        eventLoopGroup: any EventLoopGroup,
        tlsConfiguration: TLSConfiguration? = nil
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
            body: clientBody,
            tlsConfiguration: tlsConfiguration
        )
    }

    // MARK: - Response

    /// Receives the request's events from AsyncHTTPClient and hands them to the attempt.
    private final class Delegate: HTTPClientResponseDelegate {
        typealias Response = Void

        let owner: AsyncHTTPClientTransportTask
        /// The URL the response is reported at: the request's, or the last a client passed in
        /// visited if it follows redirects itself. Only this delegate's callbacks read and
        /// write it, and AsyncHTTPClient calls them one at a time, in order, on the task's loop.
        private nonisolated(unsafe) var url: URL

        init(owner: AsyncHTTPClientTransportTask, url: URL) {
            self.owner = owner
            self.url = url
        }

        func didVisitURL(task: HTTPClient.Task<Void>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
            url = request.url
        }

        func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
            owner.didSend(part.readableBytes)
        }

        func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            owner.didReceive(head, at: url, on: task.eventLoop)
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            owner.didReceive(buffer, on: task.eventLoop)
        }

        func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
            owner.fail(with: error)
        }

        func didFinishRequest(task: HTTPClient.Task<Void>) throws {
            owner.complete(with: nil)
        }
    }

    private func didSend(_ bytes: Int) {
        let total = state.withLockedValue { state -> Int64? in
            // Timed out or cancelled: a late part.
            guard case .running = state.phase else { return nil }
            state.bytesSent += Int64(bytes)
            state.lastActivity = .now()
            return state.bytesSent
        }
        guard let total else { return }
        let expected = body?.length
        eventHandler.transportTask(self, didSendBodyBytes: total, of: expected)
    }

    private func didReceive(
        _ head: HTTPResponseHead,
        at url: URL,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<Void> {
        let isRunning = state.withLockedValue { state -> Bool in
            guard case .running = state.phase, !state.isCancelling else { return false }
            state.lastActivity = .now()
            state.responseDate = Date()
            state.statusCode = Int(head.status.code)
            state.networkProtocolName = Self.protocolName(of: head.version)
            return true
        }
        guard isRunning else { return eventLoop.makeFailedFuture(HTTPClientError.cancelled) }
        // Parts, not an HTTPURLResponse: FoundationNetworking's costs more than the whole
        // request, and is built only if someone asks for it (see ResponseHead).
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(head.headers.count)
        for (name, value) in head.headers { fields.append((name, value)) }
        let responseHead = ResponseHead(
            url: url,
            statusCode: Int(head.status.code),
            httpVersion: head.version == .http1_1 ? "HTTP/1.1" : "HTTP/\(head.version.major).\(head.version.minor)",
            headerFields: fields
        )
        eventHandler.transportTask(self, didReceive: responseHead)
        return demand(on: eventLoop)
    }

    /// The ALPN-style name of `version`, as URLSession's metrics give it.
    private static func protocolName(of version: HTTPVersion) -> String {
        switch version {
        case .http1_1: return "http/1.1"
        case .http2: return "h2"
        default: return version.major == 2 ? "h2" : "http/\(version.major).\(version.minor)"
        }
    }

    private func didReceive(_ buffer: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        // After completion (a cancel from another thread) nothing more may reach the handler.
        let isRunning = state.withLockedValue { state -> Bool in
            guard case .running = state.phase else { return false }
            return true
        }
        guard isRunning else { return eventLoop.makeFailedFuture(HTTPClientError.cancelled) }
        // Deliver first, then ask for more under one lock: a suspend() made while handling this
        // chunk already holds back the next read.
        // The Data shares the buffer's storage (kept alive by it) rather than copying every byte.
        let data =
            buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy)
            ?? Data(buffer.readableBytesView)
        eventHandler.transportTask(self, didReceive: data)
        return demand(on: eventLoop, receivedBytes: buffer.readableBytes)
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

    /// Completes with `error` as a `URLError`. Under the session's trust settings, a refused chain,
    /// or a connection the server closed before answering, is looked at again first
    /// (`CertificateDiagnosis`), once, to say why: which certificate of the chain is at fault, or
    /// that the server refused the client certificate (under TLS 1.3 its alert comes after the
    /// client's side of the handshake, and reaches AsyncHTTPClient as the connection closing).
    fileprivate func fail(with error: any Error) {
        enum Diagnosis { case chain, clientCertificate }
        var diagnosis: Diagnosis?
        if head?.serverTrustPolicy != nil, diagnoses != nil {
            if CertificateDiagnosis.applies(to: error) {
                diagnosis = .chain
            } else if Self.urlError(for: error).code == .networkConnectionLost,
                state.withLockedValue({ $0.statusCode == nil })
            {
                diagnosis = .clientCertificate
            }
        }
        guard let head, let policy = head.serverTrustPolicy, let diagnoses, let tlsConfiguration, let diagnosis else {
            complete(with: Self.urlError(for: error, trustPolicy: head?.serverTrustPolicy))
            return
        }
        enum Next { case diagnose, wait, complete }
        // AsyncHTTPClient reports a failure twice (to the delegate and through the task's
        // future): the second finds the diagnosis under way and leaves the completion to it.
        let next = state.withLockedValue { state -> Next in
            guard case .running = state.phase, !state.isCancelling else { return .complete }
            if state.isDiagnosing { return .wait }
            state.isDiagnosing = true
            return .diagnose
        }
        switch next {
        case .wait: return
        case .complete:
            complete(with: Self.urlError(for: error, trustPolicy: policy))
            return
        case .diagnose: break
        }
        let port = head.url.port ?? 443
        switch diagnosis {
        case .chain:
            diagnoses.problem(host: policy.host, port: port, tls: tlsConfiguration).whenSuccess { [self] problem in
                complete(
                    with: Self.carrying(
                        .serverTrustEvaluationFailed(reason: .certificateRejected(host: policy.host, problem: problem)),
                        as: .serverCertificateUntrusted
                    )
                )
            }
        case .clientCertificate:
            diagnoses.clientCertificateProblem(host: policy.host, port: port, tls: tlsConfiguration).whenSuccess {
                [self] problem in
                guard let problem else {
                    complete(with: Self.urlError(for: error, trustPolicy: policy))
                    return
                }
                complete(
                    with: Self.carrying(
                        .serverTrustEvaluationFailed(
                            reason: .clientCertificateRefused(host: policy.host, problem: problem)
                        ),
                        as: .clientCertificateRejected
                    )
                )
            }
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
        if let ticket = snapshot.steeringTicket { steering.end(ticket) }
        // A read held for a suspension is released (as failed) so no promise is left pending.
        snapshot.pendingDemand?.fail(HTTPClientError.cancelled)
        if idleTimeout != nil { idleWatch.stopWatching(self) }
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

    /// `urlError(for:)`, except that under a session's trust settings a refused certificate (or
    /// client certificate) is the ``CourierError`` saying so.
    static func urlError(for error: any Error, trustPolicy: ServerTrustPolicy?) -> URLError {
        if let error = error as? CourierError { return carrying(error, as: .serverCertificateUntrusted) }
        guard let policy = trustPolicy else { return urlError(for: error) }
        if let problem = CertificateDiagnosis.clientCertificateProblem(
            in: "\(error)",
            showsCertificate: policy.clientCertificate != nil
        ) {
            return carrying(
                .serverTrustEvaluationFailed(reason: .clientCertificateRefused(host: policy.host, problem: problem)),
                as: .clientCertificateRejected
            )
        }
        let problem: String
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            problem = "it names another host"
        } else if let error = error as? NIOSSLError, isCertificateRejection(error) {
            problem = CertificateDiagnosis.generalProblem
        } else {
            return urlError(for: error)
        }
        return carrying(
            .serverTrustEvaluationFailed(reason: .certificateRejected(host: policy.host, problem: problem)),
            as: .serverCertificateUntrusted
        )
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
            case .proxyAuthenticationRequired:
                // AsyncHTTPClient reaches every target through a proxy with `CONNECT`, and fails
                // when the proxy answers it `407`: the request never sees the challenge, so the
                // credential belongs to the transport's configuration.
                return URLError(
                    .userAuthenticationRequired,
                    userInfo: [
                        NSUnderlyingErrorKey: error,
                        NSLocalizedDescriptionKey:
                            "The proxy asked for credentials (407); give them to the transport's "
                            + "HTTPClient.Configuration.Proxy.server(host:port:authorization:).",
                    ]
                )
            default: code = .unknown
            }
        case let error as NIOConnectionError:
            // No address to try at all means the name did not resolve; every address unreachable
            // because the machine has no network is what Apple's URLSession calls offline.
            let unresolved = error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
            let offline =
                !error.connectionErrors.isEmpty
                && error.connectionErrors.allSatisfy { ($0.error as? IOError)?.errnoCode == ENETUNREACH }
            code = unresolved ? .cannotFindHost : offline ? .notConnectedToInternet : .cannotConnectToHost
        case let error as ChannelError:
            switch error {
            case .connectTimeout: code = .timedOut
            case .ioOnClosedChannel, .eof, .outputClosed, .alreadyClosed: code = .networkConnectionLost
            default: code = .unknown
            }
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            code = .cannotConnectToHost
        case let error as IOError where error.errnoCode == ENETUNREACH:
            code = .notConnectedToInternet
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
