import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``EventMonitor`` made of closures, as Alamofire's `ClosureEventMonitor`: set the ones you
/// want, leave the rest `nil`. Each runs on ``queue``.
///
/// ```swift
/// let monitor = ClosureEventMonitor()
/// monitor.requestDidFinish = { request in print(request.id, request.error as Any) }
/// let session = Session(eventMonitors: [monitor])
/// ```
///
/// The closures may be set at any time, from any thread; an event uses the closure set when it
/// happens.
public final class ClosureEventMonitor: EventMonitor {
    /// The closures, behind one lock: the class is then `Sendable` as the compiler checks it.
    private struct Handlers {
        var requestDidCreate: (@Sendable (Request) -> Void)?
        var requestDidResume: (@Sendable (Request) -> Void)?
        var requestDidSuspend: (@Sendable (Request) -> Void)?
        var requestDidCancel: (@Sendable (Request) -> Void)?
        var requestDidFinish: (@Sendable (Request) -> Void)?
        var requestDidResumeTask: (@Sendable (Request) -> Void)?
        var requestDidSuspendTask: (@Sendable (Request) -> Void)?
        var requestDidCancelTask: (@Sendable (Request) -> Void)?
        var requestDidCreateInitialURLRequest: (@Sendable (Request, URLRequest) -> Void)?
        var requestDidCreateURLRequest: (@Sendable (Request, URLRequest) -> Void)?
        var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, CourierError) -> Void)?
        var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, URLRequest, URLRequest) -> Void)?
        var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, URLRequest, CourierError) -> Void)?
        var requestDidStartAttempt: (@Sendable (Request, URLRequest) -> Void)?
        var requestDidReceiveResponseHead: (@Sendable (Request, ResponseHead) -> Void)?
        var requestWillFollowRedirect: (@Sendable (Request, Redirect) -> Void)?
        var requestDidCompleteAttempt: (@Sendable (Request, RequestMetrics, CourierError?) -> Void)?
        var requestDidValidate: (@Sendable (Request, CourierError?) -> Void)?
        var requestWillRetryAfter: (@Sendable (Request, TimeInterval) -> Void)?
        var requestIsRetrying: (@Sendable (Request) -> Void)?
        var requestDidIgnoreCustomResponse: (@Sendable (Request, String) -> Void)?
        var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<any Sendable, CourierError>) -> Void)?
        var requestDidCreateUploadable: (@Sendable (UploadRequest, RequestBody) -> Void)?
        var requestDidFailToCreateUploadable: (@Sendable (UploadRequest, CourierError) -> Void)?
        var requestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)?
        var requestDidFinishDownloading: (@Sendable (DownloadRequest, Result<URL, CourierError>) -> Void)?
        var requestDidParseDownloadResponse:
            (@Sendable (DownloadRequest, DownloadResponse<any Sendable, CourierError>) -> Void)?
        var requestDidParseStream: (@Sendable (DataStreamRequest, Result<any Sendable, CourierError>) -> Void)?
    }

    /// Where the closures run.
    public let queue: DispatchQueue
    private let handlers = Protected(Handlers())

    /// A monitor with no closures yet, calling them on `queue` (a serial queue of its own by default).
    public init(queue: DispatchQueue = DispatchQueue(label: "Courier.ClosureEventMonitor")) {
        self.queue = queue
    }

    private func handler<Handler>(_ path: KeyPath<Handlers, Handler?>) -> Handler? {
        handlers.withLock { $0[keyPath: path] }
    }

    private func setHandler<Handler>(_ path: WritableKeyPath<Handlers, Handler?>, _ handler: Handler?) {
        // The replaced closure is released after unlocking: what it captured may call back.
        let replaced = handlers.withLock { handlers in
            defer { handlers[keyPath: path] = handler }
            return handlers[keyPath: path]
        }
        _ = replaced
    }

    /// The request was created.
    public var requestDidCreate: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidCreate) }
        set { setHandler(\.requestDidCreate, newValue) }
    }

    /// The request was resumed.
    public var requestDidResume: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidResume) }
        set { setHandler(\.requestDidResume, newValue) }
    }

    /// The request was suspended.
    public var requestDidSuspend: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidSuspend) }
        set { setHandler(\.requestDidSuspend, newValue) }
    }

    /// The request was cancelled.
    public var requestDidCancel: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidCancel) }
        set { setHandler(\.requestDidCancel, newValue) }
    }

    /// The request finished.
    public var requestDidFinish: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidFinish) }
        set { setHandler(\.requestDidFinish, newValue) }
    }

    /// An attempt's request was built from the caller's parameters, before adaptation.
    public var requestDidCreateInitialURLRequest: (@Sendable (Request, URLRequest) -> Void)? {
        get { handler(\.requestDidCreateInitialURLRequest) }
        set { setHandler(\.requestDidCreateInitialURLRequest, newValue) }
    }

    /// An attempt's request was built.
    public var requestDidCreateURLRequest: (@Sendable (Request, URLRequest) -> Void)? {
        get { handler(\.requestDidCreateURLRequest) }
        set { setHandler(\.requestDidCreateURLRequest, newValue) }
    }

    /// Building the request failed.
    public var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, CourierError) -> Void)? {
        get { handler(\.requestDidFailToCreateURLRequestWithError) }
        set { setHandler(\.requestDidFailToCreateURLRequestWithError, newValue) }
    }

    /// An adapter changed the request.
    public var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, URLRequest, URLRequest) -> Void)? {
        get { handler(\.requestDidAdaptInitialRequestToAdaptedRequest) }
        set { setHandler(\.requestDidAdaptInitialRequestToAdaptedRequest, newValue) }
    }

    /// An adapter failed.
    public var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, URLRequest, CourierError) -> Void)? {
        get { handler(\.requestDidFailToAdaptURLRequestWithError) }
        set { setHandler(\.requestDidFailToAdaptURLRequestWithError, newValue) }
    }

    /// An attempt was sent.
    public var requestDidStartAttempt: (@Sendable (Request, URLRequest) -> Void)? {
        get { handler(\.requestDidStartAttempt) }
        set { setHandler(\.requestDidStartAttempt, newValue) }
    }

    /// An attempt's response head arrived.
    public var requestDidReceiveResponseHead: (@Sendable (Request, ResponseHead) -> Void)? {
        get { handler(\.requestDidReceiveResponseHead) }
        set { setHandler(\.requestDidReceiveResponseHead, newValue) }
    }

    /// A redirect is about to be followed.
    public var requestWillFollowRedirect: (@Sendable (Request, Redirect) -> Void)? {
        get { handler(\.requestWillFollowRedirect) }
        set { setHandler(\.requestWillFollowRedirect, newValue) }
    }

    /// An attempt ended, with its metrics and error.
    public var requestDidCompleteAttempt: (@Sendable (Request, RequestMetrics, CourierError?) -> Void)? {
        get { handler(\.requestDidCompleteAttempt) }
        set { setHandler(\.requestDidCompleteAttempt, newValue) }
    }

    /// Validation ran: the error, or `nil` when it passed.
    public var requestDidValidate: (@Sendable (Request, CourierError?) -> Void)? {
        get { handler(\.requestDidValidate) }
        set { setHandler(\.requestDidValidate, newValue) }
    }

    /// A retry was decided, after the delay given.
    public var requestWillRetryAfter: (@Sendable (Request, TimeInterval) -> Void)? {
        get { handler(\.requestWillRetryAfter) }
        set { setHandler(\.requestWillRetryAfter, newValue) }
    }

    /// The next attempt is starting.
    public var requestIsRetrying: (@Sendable (Request) -> Void)? {
        get { handler(\.requestIsRetrying) }
        set { setHandler(\.requestIsRetrying, newValue) }
    }

    /// An attempt's transfer started, or continued after a suspend.
    public var requestDidResumeTask: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidResumeTask) }
        set { setHandler(\.requestDidResumeTask, newValue) }
    }

    /// An attempt's transfer was paused by `suspend()`.
    public var requestDidSuspendTask: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidSuspendTask) }
        set { setHandler(\.requestDidSuspendTask, newValue) }
    }

    /// An attempt's transfer was stopped by `cancel()`.
    public var requestDidCancelTask: (@Sendable (Request) -> Void)? {
        get { handler(\.requestDidCancelTask) }
        set { setHandler(\.requestDidCancelTask, newValue) }
    }

    /// A custom request's delegate answered too late and the answer was dropped, for the reason given.
    public var requestDidIgnoreCustomResponse: (@Sendable (Request, String) -> Void)? {
        get { handler(\.requestDidIgnoreCustomResponse) }
        set { setHandler(\.requestDidIgnoreCustomResponse, newValue) }
    }

    /// A response was serialized: the response with its value as `any Sendable`.
    public var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<any Sendable, CourierError>) -> Void)? {
        get { handler(\.requestDidParseResponse) }
        set { setHandler(\.requestDidParseResponse, newValue) }
    }

    /// An upload's body was made.
    public var requestDidCreateUploadable: (@Sendable (UploadRequest, RequestBody) -> Void)? {
        get { handler(\.requestDidCreateUploadable) }
        set { setHandler(\.requestDidCreateUploadable, newValue) }
    }

    /// An upload's body could not be made.
    public var requestDidFailToCreateUploadable: (@Sendable (UploadRequest, CourierError) -> Void)? {
        get { handler(\.requestDidFailToCreateUploadable) }
        set { setHandler(\.requestDidFailToCreateUploadable, newValue) }
    }

    /// A download's destination was named.
    public var requestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)? {
        get { handler(\.requestDidCreateDestinationURL) }
        set { setHandler(\.requestDidCreateDestinationURL, newValue) }
    }

    /// A download's file reached its place, or could not be moved there.
    public var requestDidFinishDownloading: (@Sendable (DownloadRequest, Result<URL, CourierError>) -> Void)? {
        get { handler(\.requestDidFinishDownloading) }
        set { setHandler(\.requestDidFinishDownloading, newValue) }
    }

    /// A download's response handler produced its response (its value type-erased).
    public var requestDidParseDownloadResponse:
        (@Sendable (DownloadRequest, DownloadResponse<any Sendable, CourierError>) -> Void)?
    {
        get { handler(\.requestDidParseDownloadResponse) }
        set { setHandler(\.requestDidParseDownloadResponse, newValue) }
    }

    /// A stream serializer made a value of a piece, or failed to (the value type-erased).
    public var requestDidParseStream: (@Sendable (DataStreamRequest, Result<any Sendable, CourierError>) -> Void)? {
        get { handler(\.requestDidParseStream) }
        set { setHandler(\.requestDidParseStream, newValue) }
    }

    // MARK: - EventMonitor

    /// Calls the closure set for this event, if any.
    public func requestDidCreate(_ request: Request) { handler(\.requestDidCreate)?(request) }
    /// Calls the closure set for this event, if any.
    public func requestDidResume(_ request: Request) { handler(\.requestDidResume)?(request) }
    /// Calls the closure set for this event, if any.
    public func requestDidSuspend(_ request: Request) { handler(\.requestDidSuspend)?(request) }
    /// Calls the closure set for this event, if any.
    public func requestDidCancel(_ request: Request) { handler(\.requestDidCancel)?(request) }
    /// Calls the closure set for this event, if any.
    public func requestDidFinish(_ request: Request) { handler(\.requestDidFinish)?(request) }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        handler(\.requestDidCreateURLRequest)?(request, urlRequest)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        handler(\.requestDidCreateInitialURLRequest)?(request, urlRequest)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: CourierError) {
        handler(\.requestDidFailToCreateURLRequestWithError)?(request, error)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didAdaptInitialRequest initial: URLRequest, to adapted: URLRequest) {
        handler(\.requestDidAdaptInitialRequestToAdaptedRequest)?(request, initial, adapted)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didFailToAdaptURLRequest initial: URLRequest, withError error: CourierError)
    { handler(\.requestDidFailToAdaptURLRequestWithError)?(request, initial, error) }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didStartAttemptWith urlRequest: URLRequest) {
        handler(\.requestDidStartAttempt)?(request, urlRequest)
    }
    /// Calls the closure set for this event, if any, building the `URLRequest` only then.
    public func request(_ request: Request, didStartAttemptWith head: RequestHead) {
        handler(\.requestDidStartAttempt)?(request, head.urlRequest)
    }
    /// Calls the closure set for this event, if any, building the `URLRequest` only then.
    public func request(_ request: Request, didCreateRequest head: RequestHead) {
        handler(\.requestDidCreateURLRequest)?(request, head.urlRequest)
    }
    /// Calls the closure set for this event, if any, building the `URLRequest` only then.
    public func request(_ request: Request, didCreateInitialRequest head: RequestHead) {
        handler(\.requestDidCreateInitialURLRequest)?(request, head.urlRequest)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didReceive head: ResponseHead) {
        handler(\.requestDidReceiveResponseHead)?(request, head)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, willFollow redirect: Redirect) {
        handler(\.requestWillFollowRedirect)?(request, redirect)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        handler(\.requestDidCompleteAttempt)?(request, metrics, error)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didValidateWithError error: CourierError?) {
        handler(\.requestDidValidate)?(request, error)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        handler(\.requestWillRetryAfter)?(request, delay)
    }
    /// Calls the closure set for this event, if any.
    public func requestIsRetrying(_ request: Request) { handler(\.requestIsRetrying)?(request) }
    /// Calls the closure set for this event, if any.
    public func requestDidResumeTask(_ request: Request) { handler(\.requestDidResumeTask)?(request) }
    /// Calls the closure set for this event, if any.
    public func requestDidSuspendTask(_ request: Request) { handler(\.requestDidSuspendTask)?(request) }
    /// Calls the closure set for this event, if any.
    public func requestDidCancelTask(_ request: Request) { handler(\.requestDidCancelTask)?(request) }
    /// Calls the closure set for this event, if any.
    public func request(_ request: Request, didIgnoreCustomResponse reason: String) {
        handler(\.requestDidIgnoreCustomResponse)?(request, reason)
    }

    /// Calls the closure set for this event, if any.
    public func request<Value: Sendable>(
        _ request: DataRequest,
        didParseResponse response: DataResponse<Value, CourierError>
    ) {
        guard let handler = handler(\.requestDidParseResponse) else { return }
        handler(request, response.map { $0 as any Sendable })
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: UploadRequest, didCreateUploadable body: RequestBody) {
        handler(\.requestDidCreateUploadable)?(request, body)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: CourierError) {
        handler(\.requestDidFailToCreateUploadable)?(request, error)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        handler(\.requestDidCreateDestinationURL)?(request, url)
    }
    /// Calls the closure set for this event, if any.
    public func request(_ request: DownloadRequest, didFinishDownloadingWith result: Result<URL, CourierError>) {
        handler(\.requestDidFinishDownloading)?(request, result)
    }
    /// Calls the closure set for this event, if any.
    public func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, CourierError>
    ) {
        guard let handler = handler(\.requestDidParseDownloadResponse) else { return }
        handler(request, response.map { $0 as any Sendable })
    }
    /// Calls the closure set for this event, if any.
    public func request<Value: Sendable>(
        _ request: DataStreamRequest,
        didParseStream result: Result<Value, CourierError>
    ) {
        guard let handler = handler(\.requestDidParseStream) else { return }
        handler(request, result.map { $0 as any Sendable })
    }
}
