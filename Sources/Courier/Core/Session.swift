import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes and runs requests over one ``Transport``, with shared defaults: headers, event
/// monitors, whether requests start by themselves.
///
/// ```swift
/// let session = Session()
/// let user = try await session.request("http://127.0.0.1:8080/get", parameters: ["q": "swift"])
///     .validate()
///     .serializingDecodable(User.self).value
/// ```
///
/// A request holds its session, and the session its transport, from when it is made until it
/// finishes, so `try await Session().request(url).serializingData().value` works as written.
/// ``invalidate()`` ends what is running (with ``CourierError/Kind/sessionInvalidated``) and shuts the transport down; a session that goes
/// away (nothing holds it, so nothing of it is running) shuts its transport down too.
public final class Session: RequestDelegate, Sendable {
    /// How a session behaves; every property has a default.
    public struct Configuration: Sendable {
        /// Headers sent with every request unless the request sets its own: by default
        /// ``HTTPHeaders/default`` (`Accept-Encoding`, `Accept-Language`, `User-Agent`).
        public var headers: HTTPHeaders = .default
        /// Whether adding a response handler starts a request (`true`); if `false`, call `resume()`.
        public var startRequestsImmediately = true
        /// Whether the session's requests post ``Request/didResumeNotification`` and the other
        /// lifecycle notifications to `NotificationCenter.default` (see ``CourierNotifications``):
        /// on by default, as in Alamofire. Turn it off to save the work (a few queued posts per
        /// request) when nothing observes them.
        public var postsNotifications = true
        /// The largest response body a ``DataRequest`` (and an upload) keeps in memory, counted
        /// after decompression on every transport; a larger one fails the request with
        /// ``CourierError/Kind/bodyTooLarge`` as soon as it passes the limit. 64 MiB by default
        /// (``defaultMaximumResponseBodySize``), so that a server cannot fill the process's memory
        /// (a 1 MB gzip body can inflate to 1 GiB); `nil` means no limit. Downloads write to disk
        /// and stream requests hand bodies over in pieces: neither is bound by it.
        public var maximumResponseBodySize: Int? = Configuration.defaultMaximumResponseBodySize

        /// The default ``maximumResponseBodySize``: 64 MiB.
        public static let defaultMaximumResponseBodySize = 64 * 1024 * 1024
        /// The timeout for each attempt, in seconds, when the URLRequest sets none (60 by default).
        /// Zero, negative, NaN or infinite means no timeout; at most about 31 years (1e9 s) is kept.
        public var timeoutInterval: TimeInterval = 60
        /// The longest a request may run, in seconds, over all its attempts and retry delays; past
        /// it, the request fails with `URLError(.timedOut)`, and a retry that would start after it
        /// is not made (the request fails with its last error). `nil` (the default): no deadline;
        /// a negative, NaN or infinite one is none either, and one past 1e9 s is cut to that.
        public var requestDeadline: TimeInterval?
        /// Bounds the share of retries among requests (see ``RetryBudget``); `nil` for no bound.
        /// By default a new budget: 20 % of requests plus 10 retries a second, over 10 s.
        public var retryBudget: RetryBudget? = RetryBudget()
        /// Signals that make requests waiting out a retry delay retry at once (see ``RetryTrigger``),
        /// such as a ``NetworkMonitor``.
        public var retryTriggers: [any RetryTrigger] = []
        /// Whether a request succeeding (status below 400) makes the requests waiting to retry on the
        /// same origin retry at once: the server is evidently back (on by default).
        public var retriesEarlyWhenOriginRecovers = true
        /// How many redirects a request follows in one attempt; one more fails it with
        /// ``CourierError/Kind/redirectFailed`` (``CourierError/RedirectFailureReason/tooManyRedirects(limit:)``).
        /// 16 by default, as URLSession; a request may set its own (``Request/redirect(limit:)``).
        /// To take every redirect as the response, use ``Redirector/doNotFollow``.
        public var redirectLimit = 16
        /// Whether a redirect from `https` to plain `http` is followed. Off by default: such a
        /// redirect fails the request with ``CourierError/Kind/redirectFailed``, since what follows
        /// would travel in the clear.
        public var allowsInsecureRedirects = false
        /// Whether a `GET` may carry an in-memory body. Off by default, as in Alamofire: such a
        /// request fails before sending with ``CourierError/Kind/urlRequestValidationFailed``,
        /// since most servers ignore or reject the body. Turn it on for an API that reads one
        /// (Elasticsearch's `_search`, say). Upload bodies are not checked.
        public var allowsBodyInGETRequests = false
        /// Whether a request's own URL (or an adapter's) may be a `file:` URL, which Courier then
        /// reads as the body of a `200`, as Alamofire loads one through URLSession. On by default,
        /// as in Alamofire; turn it off when URLs come from outside the app (a link in a server's
        /// JSON, say), so that none can make the app read its own disk: such a request then fails
        /// with ``CourierError/Kind/invalidURL``. A server's redirect never leads to a file either way.
        public var allowsFileURLs = true
        /// Where a request that gets a `401` looks for a credential when it has none of its own
        /// (``Request/authenticate(with:)``), by the challenge's protection space (host, port,
        /// scheme, realm, method), and where a credential the server accepted is kept as its
        /// `persistence` says. `URLCredentialStorage.shared` by default, as URLSession; `nil`
        /// answers challenges only with a request's own credential.
        public var credentialStorage: URLCredentialStorage? = .shared
        /// Where every request's cookies are kept and read, on both transports: each response's
        /// `Set-Cookie` fields are stored by RFC 6265's rules for the URL that answered (each
        /// redirect's too), and each request sent (each redirect's next request too) carries the
        /// cookies stored for its URL, unless it sets `Cookie` itself. A ``CookieJar`` of its own
        /// by default, in memory (copies of this configuration share it); an
        /// ``HTTPCookieStorageAdapter`` shares Foundation's `HTTPCookieStorage`; `nil` turns
        /// cookies off.
        public var cookieStorage: (any CookieStorage)? = CookieJar()
        /// Courier's own HTTP cache (RFC 9111, a private cache), the same over both transports
        /// and on Linux; `nil` (the default) caches nothing. One line turns it on:
        /// `$0.httpCache = .memory()` or `try .disk(directory:)`. Each request may choose how it
        /// uses it (``Request/cache(_:)``), and its metrics say where its answer came from
        /// (``RequestMetrics/responseSource``). A session over a ``URLSessionTransport`` whose
        /// configuration had a `URLCache` finds that transport's ``URLSessionTransport/httpCache``
        /// here when it set none.
        public var httpCache: HTTPCache?
        /// Chooses how each `https` host's server is checked (pins, a CA of your own, no check
        /// in development); `nil` (the default): the system's checks for every host. See
        /// ``ServerTrustManager``. A request whose host it refuses, or whose evaluator the
        /// transport cannot apply, fails before connecting with
        /// ``CourierError/Kind/serverTrustEvaluationFailed``.
        public var serverTrustManager: ServerTrustManager?
        /// The certificate authorities `https` servers must chain to: the system's (the default),
        /// the system's and yours (`.systemAnd([ca])`), or only yours (`.only([ca])`).
        public var trustRoots: TrustRoots = .system
        /// The certificate (and key) shown to a server that asks the client for one (mutual
        /// TLS); `nil` (the default) shows none.
        public var clientCertificate: ClientCertificate?

        /// The defaults.
        public init() {}

        /// The defaults, changed by `configure`.
        public init(_ configure: (inout Configuration) -> Void) {
            configure(&self)
        }
    }

    /// A session with the default configuration and transport, for quick use.
    public static let `default` = Session()

    /// The configuration the session runs with.
    public let configuration: Configuration
    /// Whether every header of ``Configuration/headers`` is valid: checked once, here, rather
    /// than for every request.
    private let defaultHeadersAreValid: Bool
    /// The transport that runs the attempts.
    public let transport: any Transport
    /// What requests send their exchanges over: ``transport``, behind the ``Configuration/httpCache``
    /// when there is one.
    let exchangeTransport: any Transport
    /// Adapts and retries every request of the session, after each request's own interceptor.
    public let interceptor: (any RequestInterceptor)?
    /// Decides every request's redirects, unless the request has its own; `nil` follows them all.
    public let redirectHandler: (any RedirectHandler)?
    /// Decides what the cache stores of every request's responses, unless the request has its
    /// own; `nil` stores what the rules allow.
    public let cachedResponseHandler: (any CachedResponseHandler)?
    /// The monitor told of every request's events (all of the session's monitors).
    public let eventMonitor: CompositeEventMonitor
    /// The monitors among ``eventMonitor``'s that capture a context for each request and set
    /// headers on its exchanges (see ``RequestContextPropagator``).
    let contextPropagators: [any RequestContextPropagator]
    /// Posts every request's lifecycle notifications, unless the configuration turned them off.
    let notifications: CourierNotifications?
    /// Where serializers run: each request gets a serial queue targeting this one.
    public let serializationQueue: DispatchQueue
    /// The queue the session's other queues target, when one was given (Alamofire's `rootQueue`).
    public let rootQueue: DispatchQueue?
    /// Where each attempt's URLRequest is built (the convertible, the request modifier) and its
    /// adaptation started, when one was given (Alamofire's `requestQueue`); `nil` builds the first
    /// attempt on the thread that resumes the request, and a retry's in a task of its own.
    public let requestQueue: DispatchQueue?

    /// What the session tracks: running requests, those waiting to retry, trigger subscriptions.
    private struct Registry {
        /// Weak: a request holds its session while it runs, not the other way round, so a request
        /// nobody holds that was never started does not keep its session alive.
        var requests: [UUID: WeakRequest] = [:]
        var retrySchedule = RetrySchedule()
        var triggerObservations: [RetryTriggerObservation] = []
        var isInvalidated = false
    }

    private let registry = Protected(Registry())
    /// How many answers each Digest nonce has had, across the session's requests (RFC 7616's `nc`).
    let digestNonceCounts = Protected(DigestAuthentication.NonceCounter())
    /// Times retry delays and request deadlines.
    let clock: SessionClock

    /// A registered request, held weakly.
    private struct WeakRequest {
        weak var request: Request?
    }

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - configuration: Defaults for every request.
    ///   - transport: What runs the requests. By default, AsyncHTTPClient's shared client when
    ///     `CourierNIO` is linked into the program, else a ``URLSessionTransport``.
    ///   - rootQueue: A queue for ``requestQueue`` and ``serializationQueue`` to target when they
    ///     are not given, as in Alamofire: it pins this session's building, adapting and
    ///     serializing to one queue (and its quality of service). Handlers still run on the queue
    ///     each is given (`.courierCallbacks` by default).
    ///   - requestQueue: Where each attempt's URLRequest is built and adapted (see ``requestQueue``).
    ///   - serializationQueue: Where completion handlers' serializers and validators run; each
    ///     request gets a serial queue targeting it (an awaited `serializing…` call serializes in
    ///     the awaiting task instead, saving a thread hop). By default a concurrent queue of Courier's (targeting `rootQueue`,
    ///     if given).
    ///   - interceptor: Adapts every attempt of every request and decides retries.
    ///   - serverTrustManager: Chooses how each `https` host's server is checked, as
    ///     ``Configuration/serverTrustManager`` (which it replaces when given).
    ///   - redirectHandler: Decides every request's redirects, unless the request has its own
    ///     (``Request/redirect(using:)``). `nil` follows them all, by the rules ``Redirect`` lists.
    ///   - cachedResponseHandler: Decides what ``Configuration/httpCache`` stores of every
    ///     request's responses, unless the request has its own (``Request/cacheResponse(using:)``).
    ///     `nil` stores what the cache's rules allow.
    ///   - eventMonitors: Told of every request's events.
    ///   - clock: Times retry delays and ``Configuration/requestDeadline``. In tests, a clock you
    ///     advance by hand (such as `CourierTesting`'s `ManualClock`) runs retries and deadlines
    ///     without waiting for them. Transport timeouts keep real time.
    public init(
        configuration: Configuration = Configuration(),
        transport: (any Transport)? = nil,
        rootQueue: DispatchQueue? = nil,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = [],
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        let transport = transport ?? DefaultTransport.make()
        var configuration = configuration
        if let serverTrustManager { configuration.serverTrustManager = serverTrustManager }
        // A URLSession transport's cache in place of its URLCache, unless the session has one.
        let urlSessionTransport = transport as? URLSessionTransport
        if configuration.httpCache == nil { configuration.httpCache = urlSessionTransport?.httpCache }
        self.configuration = configuration
        self.redirectHandler = redirectHandler
        self.cachedResponseHandler = cachedResponseHandler
        defaultHeadersAreValid = configuration.headers.firstInvalidity == nil
        self.clock = SessionClock(clock)
        self.transport = transport
        let cachingTransport =
            configuration.httpCache.map {
                CachingTransport(
                    base: transport,
                    cache: $0,
                    defaultMode: $0 === urlSessionTransport?.httpCache ? urlSessionTransport?.defaultCacheMode : nil,
                    cookies: configuration.cookieStorage
                )
            } ?? transport
        // Outermost, so that a host the trust settings refuse is refused before the cache answers.
        exchangeTransport =
            ServerTrustTransport.isNeeded(
                manager: configuration.serverTrustManager,
                trustRoots: configuration.trustRoots,
                clientCertificate: configuration.clientCertificate
            )
            ? ServerTrustTransport(
                base: cachingTransport,
                network: transport,
                manager: configuration.serverTrustManager,
                trustRoots: configuration.trustRoots,
                clientCertificate: configuration.clientCertificate
            ) : cachingTransport
        self.interceptor = interceptor
        self.eventMonitor = CompositeEventMonitor(monitors: eventMonitors)
        contextPropagators = eventMonitors.compactMap { $0 as? any RequestContextPropagator }
        // Outside the composite: it would hop to a queue for every event of every request,
        // where this queues the few it posts and drains them in bursts.
        notifications = configuration.postsNotifications ? CourierNotifications.shared : nil
        self.rootQueue = rootQueue
        self.requestQueue =
            requestQueue ?? rootQueue.map { DispatchQueue(label: "Courier.Session.request", target: $0) }
        self.serializationQueue =
            serializationQueue
            ?? DispatchQueue(label: "Courier.Session.serialization", attributes: .concurrent, target: rootQueue)
        let observations = configuration.retryTriggers.map { trigger in
            trigger.observe { [weak self] event in self?.startWaitingRetries(for: event) }
        }
        registry.withLock { $0.triggerObservations = observations }
    }

    deinit {
        let (requests, observations) = registry.withLock { state in
            (state.requests.values.compactMap(\.request), state.triggerObservations)
        }
        // Outside the lock: a trigger may hold its own lock while it calls the session.
        observations.forEach { $0.cancel() }
        // As `invalidate()` does (and Alamofire's deinit): ended, not cancelled.
        requests.forEach { $0.abandon(dueTo: .sessionInvalidated(nil)) }
        let transport = self.transport
        Task { await transport.invalidate() }
    }

    // MARK: - Making requests

    /// A request for `url`, with `parameters` encoded by `encoder` (into the query for `GET`,
    /// `HEAD`, `DELETE`, else the body, with the default encoder).
    ///
    /// Nothing is sent until a response handler is added (or ``Request/resume()`` is called).
    /// An invalid URL, an unencodable parameter or a header with CR or LF fails the request
    /// with a ``CourierError``; nothing here crashes on bad input.
    ///
    /// - Parameters:
    ///   - url: The URL, e.g. `"https://example.org/users"`.
    ///   - method: The method; `GET` by default.
    ///   - parameters: An `Encodable` value, such as `["q": "swift"]` or a struct.
    ///   - encoder: Where and how the parameters go.
    ///   - headers: Headers for this request; they win over the session's.
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest (timeout, cache policy…).
    public func request<Parameters: Encodable & Sendable>(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> DataRequest {
        request(url, method, headers, interceptor, requestModifier, shouldAutomaticallyResume) {
            try encoder.encode(parameters, into: $0)
        }
    }

    /// A request for `url` with a ``Parameters`` dictionary encoded by `encoding` (into the
    /// query for `GET`, `HEAD` and `DELETE`, else the body, with the default): Alamofire's most
    /// used call, for code that builds parameters as dictionaries.
    ///
    /// ```swift
    /// session.request(url, method: .post, parameters: ["name": "Ada"], encoding: JSONEncoding.default)
    /// ```
    ///
    /// It is the form chosen for a ``Parameters`` value, a dictionary literal of mixed value
    /// types (`["q": "swift", "page": 2]`), `nil`, or when `encoding:` is given. A literal whose
    /// values are all of one `Encodable` type (`["q": "swift"]`) keeps the `Encodable` form and
    /// its ``ParameterEncoder``, as in Alamofire.
    @_disfavoredOverload
    public func request(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoding: any ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> DataRequest {
        request(url, method, headers, interceptor, requestModifier, shouldAutomaticallyResume) {
            try encoding.encode($0, with: parameters)
        }
    }

    /// A request for `url` without parameters.
    public func request(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> DataRequest {
        request(url, method, headers, interceptor, requestModifier, shouldAutomaticallyResume, encode: nil)
    }

    /// The request the URL forms above make: their parts, and how parameters go in, if any.
    private func request(
        _ url: any URLConvertible,
        _ method: HTTPMethod,
        _ headers: HTTPHeaders?,
        _ interceptor: (any RequestInterceptor)?,
        _ requestModifier: (@Sendable (inout URLRequest) throws -> Void)?,
        _ shouldAutomaticallyResume: Bool?,
        encode: (@Sendable (URLRequest) throws -> URLRequest)?
    ) -> DataRequest {
        let convertible = RequestConvertible(
            url: url,
            method: method,
            headers: headers,
            timeout: configuration.timeoutInterval,
            requestModifier: requestModifier,
            encode: encode
        )
        return request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// A request built by `convertible`, such as a `URLRequest` or your own API route type,
    /// adapted and retried by `interceptor` before the session's interceptor.
    public func request(
        _ convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil
    ) -> DataRequest {
        register(
            DataRequest(
                convertible: convertible,
                maximumBodySize: configuration.maximumResponseBodySize,
                serializationQueue: serializationQueue,
                eventMonitor: requestEventMonitor,
                interceptor: interceptor,
                session: self
            ),
            automaticallyResuming: shouldAutomaticallyResume
        )
    }

    /// The monitor requests report to, or `nil` when the session has none (saving the calls).
    var requestEventMonitor: CompositeEventMonitor? { eventMonitor.monitors.isEmpty ? nil : eventMonitor }

    /// Holds `request` until it finishes, or fails it at once if the session was invalidated.
    /// `choice` is the factory's `shouldAutomaticallyResume:`, recorded before anyone (a monitor's
    /// `requestDidCreate`) can add a response handler.
    func register<Made: Request>(_ request: Made, automaticallyResuming choice: Bool? = nil) -> Made {
        _ = request.resumingAutomatically(choice)
        let accepted = registry.withLock { state -> Bool in
            guard !state.isInvalidated else { return false }
            state.requests[request.id] = WeakRequest(request: request)
            return true
        }
        eventMonitor.requestDidCreate(request)
        // A registered request tells the session itself when it finishes (`requestDidFinish(_:)`).
        if !accepted { request.finish(error: .sessionInvalidated(nil)) }
        return request
    }

    /// Cancels every request the session is running (or holds, not yet started), then calls
    /// `completion` on `queue`, if given. The session stays usable: requests made afterwards run.
    ///
    /// `completion` comes once every request was told to cancel, not once each has finished:
    /// await their responses for that.
    public func cancelAllRequests(
        completingOnQueue queue: DispatchQueue = .courierCallbacks,
        completion: (@Sendable () -> Void)? = nil
    ) {
        let requests = registry.withLock { $0.requests.values.compactMap(\.request) }
        requests.forEach { $0.cancel() }
        if let completion { queue.async(execute: completion) }
    }

    /// Calls `action` with every request the session is running (or holds, not yet started):
    /// to inspect or cancel some of them. `action` runs on the calling thread, with no lock held.
    public func withAllRequests(perform action: (Set<Request>) -> Void) {
        action(Set(registry.withLock { $0.requests.values.compactMap(\.request) }))
    }

    /// Refuses requests from now on, as ``invalidate()`` does, without ending those running.
    func markInvalidated() {
        registry.withLock { $0.isInvalidated = true }
    }

    /// Ends every running request with ``CourierError/Kind/sessionInvalidated`` (their transfers
    /// stop, as on a cancel; their state is `finished`) and shuts the transport down. Requests
    /// made afterwards fail the same way.
    public func invalidate() async {
        let (requests, observations) = registry.withLock { state -> ([Request], [RetryTriggerObservation]) in
            state.isInvalidated = true
            defer { state.triggerObservations.removeAll() }
            return (state.requests.values.compactMap(\.request), state.triggerObservations)
        }
        observations.forEach { $0.cancel() }
        // Ended, not cancelled, as in Alamofire: their error says the session went away.
        requests.forEach { $0.abandon(dueTo: .sessionInvalidated(nil)) }
        await transport.invalidate()
    }

    // MARK: - RequestDelegate

    /// ``Configuration/startRequestsImmediately``.
    public var startsRequestsImmediately: Bool { configuration.startRequestsImmediately }

    /// Who decides the request's retries (its own interceptor, then the session's, composed) and
    /// the session's retry budget; `nil` when there is no interceptor.
    func retryPlan(for request: Request) -> (retrier: any RequestInterceptor, budget: RetryBudget?)? {
        interceptor(for: request).map { ($0, configuration.retryBudget) }
    }

    /// Asks `retrier` whether to retry `request`, in a task the request holds (cancelling the
    /// request cancels it), and calls `completion` with the answer, or `.doNotRetry` when the
    /// budget is spent.
    ///
    /// Static, and the session looked up through the request: nothing holds the session but the
    /// retrier's own call, so a request that then finishes leaves it free to go by the time its
    /// caller resumes (the caller may drop it at once).
    static func decideRetry(
        of request: Request,
        by retrier: any RequestInterceptor,
        budget: RetryBudget?,
        dueTo error: CourierError,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        request.setPendingWork(
            Task {
                var result = RetryResult.doNotRetry
                if let session = request.weakSession {
                    result = await retrier.retry(request, for: session, dueTo: error)
                }
                // Over budget, the request fails with its own error, as if the retrier had said no.
                if result.retryRequired, let budget, !budget.spendRetry() { result = .doNotRetry }
                completion(result)
            }
        )
    }

    /// Records that `request` waits until `due` (on ``clock``) to make its next attempt, so that a
    /// ``RetryTrigger`` or a success on the same origin can start it sooner; the request itself
    /// sleeps until `due`. Returns `false`, recording nothing, if the session no longer holds the
    /// request (it finished meanwhile).
    func recordRetryWait(of request: Request, retryCount: Int, due: Duration) -> Bool {
        let wait = RetrySchedule.Wait(
            requestID: request.id,
            retryCount: retryCount,
            origin: request.requestHead.flatMap { RetryTriggerEvent.origin(of: $0.url) },
            isServerDelay: request.responseHead?.value(forHTTPHeaderField: "Retry-After") != nil,
            due: due
        )
        return registry.withLock { state in
            guard state.requests[request.id] != nil else { return false }
            state.retrySchedule.add(wait)
            return true
        }
    }

    /// The request's delay ended: forgets its wait, unless something released it first.
    func retryWaitEnded(for request: Request, retryCount: Int) {
        registry.withLock { _ = $0.retrySchedule.releaseAtDue(request.id, retryCount: retryCount) }
    }

    /// Starts at once the retries waiting for `event`'s origin, or all of them.
    func startWaitingRetries(for event: RetryTriggerEvent) {
        let released = registry.withLock { state in
            state.retrySchedule.release(for: event).compactMap { wait in
                state.requests[wait.requestID]?.request.map { ($0, wait.retryCount) }
            }
        }
        for (request, retryCount) in released { request.retryNow(endingWaitFor: retryCount) }
    }

    /// How many requests are waiting out a retry delay.
    var waitingRetryCount: Int { registry.withLock { $0.retrySchedule.count } }

    /// Forgets a finished request; when it succeeded, the requests waiting to retry on its origin
    /// may go at once. The request calls it as it finishes, before its handlers run.
    func requestDidFinish(_ request: Request) {
        let othersWait = registry.withLock { state -> Bool in
            state.requests.removeValue(forKey: request.id)
            state.retrySchedule.remove(request.id)
            return state.retrySchedule.count > 0
        }
        // The head, not `response`: building an HTTPURLResponse costs more than a request.
        guard othersWait, configuration.retriesEarlyWhenOriginRecovers, request.error == nil,
            let status = request.responseHead?.statusCode, status < 400,
            let url = request.requestHead?.url, let origin = RetryTriggerEvent.origin(of: url)
        else { return }
        // The request may have finished on the transport's thread: start the others off it.
        DispatchQueue.global().async { [weak self] in self?.startWaitingRetries(for: .origin(origin)) }
    }

    // MARK: - Attempts

    /// The head of an attempt: the caller's URL, method and headers (or their `URLRequest`) with
    /// the session's headers where the caller set none, checked: user
    /// info leaves the URL for `Authorization` (adapters and monitors never see it there), then
    /// the URL, the method and the headers are validated. An adapted request is checked again
    /// before it is sent (see `Request.perform(_:isAdapted:session:)`).
    func makeInitialHead(from convertible: any URLRequestConvertible) throws -> RequestHead {
        var head: RequestHead
        var checkedOwnHeaders = false
        if let own = convertible as? RequestConvertible {
            (head, checkedOwnHeaders) = try own.makeHead()
        } else {
            guard let read = RequestHead(try convertible.asURLRequest()) else { throw Self.noURL }
            head = read
        }
        // The session's headers were checked once, when it was made: only the caller's are
        // checked here (unless `makeHead` did), after the URL as before. If one of the session's
        // is invalid, all are checked together: the caller's may replace it.
        let headersToCheck: HeadersToCheck =
            !defaultHeadersAreValid ? .all : checkedOwnHeaders ? .none : .these(head.headers)
        head.addHeaders(configuration.headers, replacing: false)
        head = try head.movingUserInfoToAuthorization()
        try Self.validate(&head, headers: headersToCheck, allowsFileURL: configuration.allowsFileURLs)
        try checkBody(of: head)
        return head
    }

    /// Refuses a `GET` with an in-memory body unless the configuration allows one, as Alamofire
    /// does: servers ignore or reject such a body, and URLSession on Apple platforms fails it.
    func checkBody(of head: RequestHead) throws(CourierError) {
        guard head.method == .get, !configuration.allowsBodyInGETRequests, let body = head.httpBody, !body.isEmpty
        else { return }
        throw .urlRequestValidationFailed(.bodyDataInGETRequest(body))
    }

    /// The failure of a request built without a URL.
    static var noURL: CourierError { .invalidURL("", reason: "the request has no URL") }

    /// Which headers ``validate(_:headers:)`` checks.
    enum HeadersToCheck {
        /// All of the head's.
        case all
        /// These, checked before they joined the head's (the rest were checked already).
        case these(HTTPHeaders)
        /// None: all were checked already.
        case none
    }

    /// Throws the ``CourierError`` for a URL or a header no transport may be handed: SwiftNIO
    /// traps on a port above 65535, and FoundationNetworking drops a bad header silently.
    /// Marks the head's URL checked, so that the transport need not check it again.
    ///
    /// A `file:` URL passes only with `allowsFileURL` (the caller's own request or an adapter's,
    /// which Courier reads itself, see `LocalFileTransport`), and is never marked checked: a
    /// network transport handed one would check it, and refuse it.
    static func validate(
        _ head: inout RequestHead,
        headers: HeadersToCheck = .all,
        allowsFileURL: Bool = false
    ) throws(CourierError) {
        if !head.isURLChecked {
            if let problem = URLValidation.problem(with: head.url) {
                // Only http and https pass the check: a file URL is read from disk, where allowed.
                guard allowsFileURL, head.url.isFileURL else { throw problem }
                try LocalFileTransport.check(head.url)
            } else {
                head.isURLChecked = true
            }
        }
        // An adapter or a convertible of the caller's may set any method: one with a space or a
        // line break would forge the request line.
        guard head.method.isValidToken else {
            throw .invalidHeader(name: "method", reason: "the method \"\(head.method)\" is not a valid token")
        }
        let invalid: (header: HTTPHeader, reason: String)?
        switch headers {
        case .all: invalid = head.headers.firstInvalidity
        case .these(let these): invalid = these.firstInvalidity
        case .none: invalid = nil
        }
        if let (header, reason) = invalid { throw .invalidHeader(name: header.name, reason: reason) }
    }

    /// Whether `adapter` may change a request. The retry-only interceptors Courier ships do not, so
    /// requests they serve skip the adaptation `Task` and its thread hop.
    static func adapts(_ adapter: any RequestAdapter) -> Bool {
        switch adapter {
        case is Retrier, is RetryPolicy, is ConnectionLostRetryPolicy, is OfflineRetrier: return false
        case let composite as Interceptor: return composite.adapters.contains { adapts($0) }
        default: return true
        }
    }

    /// Whether `interceptor` can decide a retry: anything but adapters alone.
    static func retries(_ interceptor: (any RequestInterceptor)?) -> Bool {
        // Unwrapped first: matching `nil` in the switch below copies the existential for each case.
        guard let interceptor else { return false }
        switch interceptor {
        case is Adapter, is DeflateRequestCompressor: return false
        case let composite as Interceptor:
            return composite.retriers.contains {
                retries($0 as? any RequestInterceptor) || !($0 is any RequestInterceptor)
            }
        default: return true
        }
    }

    /// The request's own interceptor, then the session's, composed; `nil` when neither exists.
    func interceptor(for request: Request) -> (any RequestInterceptor)? {
        if request.customOperation?.usesSessionInterceptor == false { return request.interceptor }
        return interceptor(combining: request.interceptor)
    }

    /// A request's own interceptor (`own`), then the session's, composed.
    func interceptor(combining own: (any RequestInterceptor)?) -> (any RequestInterceptor)? {
        // Not a switch over the pair: that copies both existentials into a tuple, on every attempt.
        guard let own else { return interceptor }
        guard let shared = interceptor else { return own }
        return Interceptor(interceptors: [own, shared])
    }
}

/// Builds a URLRequest from a URL, method, headers and encoded parameters, throwing a
/// ``CourierError`` for whatever cannot be built.
struct RequestConvertible: URLRequestConvertible {
    let url: any URLConvertible
    let method: HTTPMethod
    let headers: HTTPHeaders?
    let timeout: TimeInterval
    let requestModifier: (@Sendable (inout URLRequest) throws -> Void)?
    let encode: (@Sendable (URLRequest) throws -> URLRequest)?

    /// The request as a ``RequestHead``: its parts when nothing needs a `URLRequest` (no
    /// parameters to encode into one, no modifier to hand one to), else the `URLRequest`'s head;
    /// and whether all of its headers were checked (a modifier may add some after the check).
    func makeHead() throws -> (head: RequestHead, checkedHeaders: Bool) {
        guard encode == nil, requestModifier == nil else {
            guard let head = RequestHead(try asURLRequest()) else {
                throw CourierError.invalidURL("", reason: "the request has no URL")
            }
            return (head, false)
        }
        let url = try url.asURL()
        try checkMethod()
        guard let headers else { return (RequestHead(method: method, url: url, timeoutInterval: timeout), true) }
        if let (header, reason) = headers.firstInvalidity {
            throw CourierError.invalidHeader(name: header.name, reason: reason)
        }
        return (RequestHead(method: method, url: url, headers: headers, timeoutInterval: timeout), true)
    }

    private func checkMethod() throws {
        guard method.isValidToken else {
            throw CourierError.invalidHeader(name: "method", reason: "the method \"\(method)\" is not a valid token")
        }
    }

    func asURLRequest() throws -> URLRequest {
        let url = try url.asURL()
        try checkMethod()
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method.rawValue
        if let headers {
            if let (header, reason) = headers.firstInvalidity {
                throw CourierError.invalidHeader(name: header.name, reason: reason)
            }
            request.addHeaders(headers, replacing: true)
        }
        if let encode {
            do {
                request = try encode(request)
            } catch let error as CourierError {
                throw error
            } catch {
                throw CourierError.parameterEncodingFailed(error)
            }
        }
        try requestModifier?(&request)
        return request
    }
}
