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
/// cookies (both are Courier features of their own), and on a redirect to another origin the
/// `Authorization` and `Cookie` headers are dropped.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let router: TaskRouter

    /// Creates a transport with a session made from `configuration`.
    ///
    /// - Parameter configuration: The URLSession configuration; by default `.default` with no URL
    ///   cache and no cookie handling. Its delegate queue is always Courier's own serial queue.
    public init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration()) {
        router = TaskRouter()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "Courier.URLSessionTransport.delegate"
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The request with a timeout FoundationNetworking honours. It ignores a `timeoutInterval`
    /// given to `URLRequest`'s initialiser (only the setter arms its timer) and truncates the
    /// interval to whole seconds, so `0.5` would time out at once; the interval is set again,
    /// rounded up, so a timeout is never shorter than asked. It also multiplies the seconds into
    /// an `Int` of milliseconds, so anything beyond about 30 years is set to that (it would trap),
    /// and so is an infinite, NaN, zero or negative one: no timeout, as on AsyncHTTPClient (set
    /// through the setter, infinity and NaN would trap, and a negative one times out at once).
    /// Apple's URLSession needs none of this.
    static func withWorkingTimeout(_ request: URLRequest) -> URLRequest {
        #if canImport(FoundationNetworking)
        let interval = request.timeoutInterval
        var request = request
        request.timeoutInterval = interval > 0 ? min(max(1, interval.rounded(.up)), 1e9) : 1e9
        return request
        #else
        return request
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

    /// `URLSessionConfiguration.default` without a URL cache and without automatic cookies.
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return configuration
    }

    /// Makes a data task, or an upload task for a file or stream `body` (a stream is sent chunked).
    public func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        var request = Self.withWorkingTimeout(request)
        let dataTask: URLSessionDataTask
        switch body?.source {
        case nil:
            dataTask = session.dataTask(with: request)
        case .data(let data):
            request.httpBody = data
            dataTask = session.dataTask(with: request)
        case .file(let url):
            request.httpBody = nil
            dataTask = session.uploadTask(with: request, fromFile: url)
        case .stream, .oneShotStream:
            // The router hands the stream over when URLSession asks for it, once per send.
            request.httpBody = nil
            dataTask = session.uploadTask(withStreamedRequest: request)
        }
        let task = URLSessionTransportTask(
            dataTask: dataTask,
            body: body,
            delegateQueue: session.delegateQueue,
            eventHandler: eventHandler
        )
        router.register(task, for: dataTask.taskIdentifier)
        return task
    }

    public func invalidate() async {
        session.finishTasksAndInvalidate()
    }
}

/// One `URLSessionDataTask` and what it has observed.
///
/// `@unchecked Sendable`: the mutable progress (`state`) sits behind one lock; the rest is immutable.
final class URLSessionTransportTask: TransportTask, @unchecked Sendable {
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
    }

    /// What the data task reported while the caller had suspended the attempt.
    enum HeldEvent {
        case response(HTTPURLResponse)
        case data(Data)
        case completion((any Error)?)
    }

    let dataTask: URLSessionDataTask
    /// The body read as it is sent, for file and stream uploads.
    let body: RequestBody?
    /// Where the session calls its delegate, one call at a time; held events are replayed there.
    private let delegateQueue: OperationQueue
    /// Weak: the request owns its tasks, and a strong reference back would keep every finished
    /// request alive. Events for a request that is gone have nobody to tell.
    weak let eventHandler: (any TransportEventHandler)?
    private let state = Protected(Progress())

    init(
        dataTask: URLSessionDataTask,
        body: RequestBody?,
        delegateQueue: OperationQueue,
        eventHandler: any TransportEventHandler
    ) {
        self.dataTask = dataTask
        self.body = body
        self.delegateQueue = delegateQueue
        self.eventHandler = eventHandler
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
        let replaysHeldEvents = state.withLock { state -> Bool in
            if state.startDate == nil { state.startDate = Date() }
            guard state.isSuspended else { return false }
            state.isSuspended = false
            if !state.hasStarted || URLSessionTransport.pausesTransfers {
                state.hasStarted = true
                dataTask.resume()
                return false
            }
            return !state.heldEvents.isEmpty
        }
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

    /// Holds `event` while the attempt is suspended (or earlier events still wait), else lets it through.
    private func holds(_ event: HeldEvent) -> Bool {
        guard !URLSessionTransport.pausesTransfers else { return false }
        return state.withLock { state in
            guard state.isSuspended || !state.heldEvents.isEmpty else { return false }
            state.heldEvents.append(event)
            return true
        }
    }

    /// Delivers the held events in order until none is left or the attempt is suspended again.
    private func deliverHeldEvents() {
        while let event = state.withLock({ state -> HeldEvent? in
            guard !state.isSuspended, !state.heldEvents.isEmpty else { return nil }
            return state.heldEvents.removeFirst()
        }) {
            switch event {
            case .response(let response): deliver(response)
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
        if !holds(.response(response)) { deliver(response) }
    }

    private func deliver(_ response: HTTPURLResponse) {
        state.withLock {
            $0.responseDate = Date()
            $0.statusCode = response.statusCode
        }
        eventHandler?.transportTask(self, didReceive: response)
    }

    func didReceive(_ data: Data) {
        if !holds(.data(data)) { deliver(data) }
    }

    private func deliver(_ data: Data) {
        state.withLock { $0.bytesReceived += Int64(data.count) }
        eventHandler?.transportTask(self, didReceive: data)
    }

    func didCollect(networkProtocolName: String?, remoteAddress: String?) {
        state.withLock {
            $0.networkProtocolName = networkProtocolName
            $0.remoteAddress = remoteAddress
        }
    }

    func didComplete(with error: (any Error)?) {
        // A cancellation is the caller's: it goes through even while suspended.
        if state.withLock({ $0.isCancelled }) {
            state.withLock { $0.heldEvents.removeAll() }
        } else if holds(.completion(error)) {
            return
        }
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
            deliver(declined)
        }
        let endDate = Date()
        let progress: Progress? = state.withLock { progress in
            guard !progress.completed else { return nil }
            progress.completed = true
            return progress
        }
        guard let progress else { return }
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
        if let error = urlError,
            let code = Self.codeApplesURLSessionReports(for: error, afterResponse: progress.responseDate != nil)
        {
            urlError = URLError(
                code,
                userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: error.localizedDescription]
            )
        }
        eventHandler?.transportTask(self, didCompleteWith: urlError, metrics: metrics)
    }

    /// The code Apple's URLSession and AsyncHTTPClient give a failure FoundationNetworking
    /// (libcurl) reports under another code, or `nil` when the code already agrees; retry
    /// policies must read the same code on every transport:
    ///
    /// | FoundationNetworking says | libcurl's message | code |
    /// |---|---|---|
    /// | `.unknown`, after the head | "transfer closed with N bytes remaining" | `.networkConnectionLost` |
    /// | `.badServerResponse`, no head | "Empty reply from server" | `.networkConnectionLost` |
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
        // A streamed body reports an expected length of 0: the body knows better, if anyone does.
        let expected = task.body?.length ?? (totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
        task.eventHandler?.transportTask(task, didSendBodyBytes: totalBytesSent, of: expected)
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
        completionHandler(RedirectPolicy.strippingCredentials(from: request, redirectedFrom: task.currentRequest?.url))
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

    #if canImport(FoundationNetworking)
    /// Declines HTTP authentication challenges. FoundationNetworking leaves a task hanging forever
    /// when a `401` with `WWW-Authenticate` meets default handling and no stored credential; declining
    /// cancels it instead, and the task then reports the `401` as Apple's URLSession does.
    /// Credentials are Courier's business (an `Authorization` header, an ``AuthenticationInterceptor``).
    func urlSession(
        _ session: URLSession,
        task sessionTask: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        // FoundationNetworking raises challenges for HTTP authentication only, always with the response.
        // A credential it can offer itself (from its storage or the URL) gets one try, as on Apple.
        guard let response = challenge.failureResponse as? HTTPURLResponse,
            challenge.proposedCredential == nil || challenge.previousFailureCount > 0
        else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        task(for: sessionTask)?.didDeclineChallenge(with: response)
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
    #endif

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
