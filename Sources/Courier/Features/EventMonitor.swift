import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Told of every step of every request of a session, for logging, metrics or tests.
///
/// Every method has an empty default, so implement only what you need. A session calls its
/// monitors through a ``CompositeEventMonitor``, each on its own ``queue``, in the order the
/// events happened. One exception: an event of an attempt that a `cancel()` or the deadline cuts
/// short as it ends (a body piece, its completion, its validation) may come after
/// ``requestDidFinish(_:)``; the start of an attempt always comes before.
///
/// A response head arrives as a ``ResponseHead``: implement the `request(_:didReceive:)` that
/// takes one to read its status and headers for free. Monitors written against the `HTTPURLResponse` form
/// keep working: the head form's default builds the `HTTPURLResponse` (on Linux over
/// AsyncHTTPClient that costs more than the request itself, see ``ResponseHead``) and calls it.
/// So a monitor that implements neither form pays for that build on its own queue, never on the
/// transport's thread; a session without monitors never pays.
public protocol EventMonitor: Sendable {
    /// The queue this monitor's methods are called on; a serial queue of Courier's by default.
    var queue: DispatchQueue { get }

    /// The request was created by the session.
    func requestDidCreate(_ request: Request)
    /// The request started or continued.
    func requestDidResume(_ request: Request)
    /// The request was paused.
    func requestDidSuspend(_ request: Request)
    /// The request was cancelled.
    func requestDidCancel(_ request: Request)
    /// The request finished (also after a cancellation); its handlers are about to run.
    func requestDidFinish(_ request: Request)
    /// An attempt's transfer started, or continued after a suspend (Alamofire's `didResumeTask`).
    func requestDidResumeTask(_ request: Request)
    /// An attempt's transfer was paused by `suspend()` (Alamofire's `didSuspendTask`).
    func requestDidSuspendTask(_ request: Request)
    /// An attempt's transfer was stopped by `cancel()` (Alamofire's `didCancelTask`).
    func requestDidCancelTask(_ request: Request)
    /// The caller's parameters were built into a URLRequest for the next attempt, before any
    /// adapter ran: once per attempt, as in Alamofire. Courier calls the ``RequestHead`` form,
    /// whose default builds the `URLRequest` and calls this one.
    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest)
    /// The caller's parameters were built into the head of the next attempt: the event Courier
    /// sends. Implement this form when the method, URL and headers are what you read: no
    /// `URLRequest` is built for you (on Linux, building one costs more than the rest of a
    /// monitor's work). By default it builds one and calls the `URLRequest` form.
    func request(_ request: Request, didCreateInitialRequest head: RequestHead)
    /// The URLRequest for an attempt was built. Courier calls the ``RequestHead`` form, whose
    /// default builds the `URLRequest` and calls this one.
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest)
    /// The head an attempt sends was built: the event Courier sends. By default it builds the
    /// `URLRequest` and calls the `URLRequest` form.
    func request(_ request: Request, didCreateRequest head: RequestHead)
    /// Building the URLRequest failed; the request will finish with `error`.
    func request(_ request: Request, didFailToCreateURLRequestWithError error: CourierError)
    /// The interceptors turned the request's initial URLRequest into `adapted` for the next attempt.
    func request(_ request: Request, didAdaptInitialRequest initial: URLRequest, to adapted: URLRequest)
    /// An adapter threw; the retriers decide next.
    func request(_ request: Request, didFailToAdaptURLRequest initial: URLRequest, withError error: CourierError)
    /// An attempt was handed to the transport. Courier calls the ``RequestHead`` form, whose
    /// default builds the `URLRequest` and calls this one.
    func request(_ request: Request, didStartAttemptWith urlRequest: URLRequest)
    /// An attempt was handed to the transport, with the head it sends: the event Courier sends.
    /// By default it builds the `URLRequest` and calls the `URLRequest` form.
    func request(_ request: Request, didStartAttemptWith head: RequestHead)
    /// An attempt's response head arrived, as an `HTTPURLResponse`. Courier calls the
    /// ``ResponseHead`` form, whose default calls this one.
    func request(_ request: Request, didReceive response: HTTPURLResponse)
    /// An attempt's response head arrived: the event Courier sends. Implement this form when the
    /// status and headers are what you read: no `HTTPURLResponse` is built for you. By default it
    /// builds one and calls the `HTTPURLResponse` form, so monitors written for that keep working.
    func request(_ request: Request, didReceive head: ResponseHead)
    /// The server redirected an attempt and Courier is about to send `redirect.nextRequest`:
    /// once per redirect followed, with the `3xx` and its exchange's metrics.
    func request(_ request: Request, willFollow redirect: Redirect)
    /// Whether this monitor wants ``request(_:didReceiveBodyPieceOf:)`` for every piece of every
    /// response body. `false` by default, so that a session whose monitors do not ask pays nothing
    /// per piece; read once, when the monitor is added to a session or a request.
    var receivesBodyPieces: Bool { get }
    /// A piece of `byteCount` bytes of the current attempt's response body arrived (data, download
    /// and stream requests alike). Called only when ``receivesBodyPieces`` is `true`.
    func request(_ request: Request, didReceiveBodyPieceOf byteCount: Int)
    /// An attempt ended, with its metrics and its transport error, if any.
    func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?)
    /// The validators ran; `error` is the first failure, or `nil` when all passed.
    func request(_ request: Request, didValidateWithError error: CourierError?)
    /// A custom request's delegate answered when no answer could count any more (a second time,
    /// or after the request was cancelled), and Courier dropped the answer; `reason` says which.
    /// A sign of a bug in the delegate, worth logging.
    func request(_ request: Request, didIgnoreCustomResponse reason: String)
    /// A retrier decided to retry after `delay` seconds; the request now waits (and a
    /// ``RetryTrigger`` or a success on its origin may end the wait early).
    func request(_ request: Request, willRetryAfter delay: TimeInterval)
    /// A retrier decided to retry and the next attempt is starting; ``Request/retryCount`` counts it.
    func requestIsRetrying(_ request: Request)
    /// A response handler produced its response.
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, CourierError>)
    /// An upload's body was made (a multipart form encoded, a file opened), before its first attempt.
    func request(_ request: UploadRequest, didCreateUploadable body: RequestBody)
    /// An upload's body could not be made; the request fails with `error`.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: CourierError)
    /// A download's `Destination` named where its file goes, before the file is moved there.
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL)
    /// A download's file reached its place (its destination, or the temporary file when it has
    /// none), or could not be moved there (`downloadedFileMoveFailed`). Alamofire's
    /// `request(_:didFinishDownloadingUsing:with:)`, without the `URLSessionTask`.
    func request(_ request: DownloadRequest, didFinishDownloadingWith result: Result<URL, CourierError>)
    /// A download's response handler produced its response.
    func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, CourierError>
    )
    /// A stream serializer (``DataStreamRequest/responseStream(using:on:bufferLimit:stream:)``,
    /// `responseStreamDecodable`, `responseStreamString`) made a value of a piece, or failed to.
    func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, CourierError>)
}

extension EventMonitor {
    /// A serial queue of Courier's, shared by monitors that do not name their own.
    public var queue: DispatchQueue { defaultEventMonitorQueue }

    public func requestDidCreate(_ request: Request) {}
    public func requestDidResume(_ request: Request) {}
    public func requestDidSuspend(_ request: Request) {}
    public func requestDidCancel(_ request: Request) {}
    public func requestDidFinish(_ request: Request) {}
    public func requestDidResumeTask(_ request: Request) {}
    public func requestDidSuspendTask(_ request: Request) {}
    public func requestDidCancelTask(_ request: Request) {}
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {}
    /// Builds the head's `URLRequest` and calls the `URLRequest` form, on the monitor's queue.
    public func request(_ request: Request, didCreateRequest head: RequestHead) {
        self.request(request, didCreateURLRequest: head.urlRequest)
    }
    /// Builds the head's `URLRequest` and calls the `URLRequest` form, on the monitor's queue.
    public func request(_ request: Request, didCreateInitialRequest head: RequestHead) {
        self.request(request, didCreateInitialURLRequest: head.urlRequest)
    }
    /// Builds the head's `URLRequest` and calls the `URLRequest` form, on the monitor's queue.
    public func request(_ request: Request, didStartAttemptWith head: RequestHead) {
        self.request(request, didStartAttemptWith: head.urlRequest)
    }
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: CourierError) {}
    public func request(_ request: Request, didAdaptInitialRequest initial: URLRequest, to adapted: URLRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {}
    public func request(
        _ request: Request,
        didFailToAdaptURLRequest initial: URLRequest,
        withError error: CourierError
    ) {}
    public func request(_ request: Request, didStartAttemptWith urlRequest: URLRequest) {}
    public func request(_ request: Request, didReceive response: HTTPURLResponse) {}
    /// Builds the head's `HTTPURLResponse` and calls the `HTTPURLResponse` form: monitors written
    /// for that form keep working. Runs on the monitor's ``queue`` when called through a
    /// ``CompositeEventMonitor``, so the build never delays the request.
    public func request(_ request: Request, didReceive head: ResponseHead) {
        guard let response = head.httpURLResponse else { return }
        self.request(request, didReceive: response)
    }
    public func request(_ request: Request, willFollow redirect: Redirect) {}
    /// `false`: body pieces are not reported.
    public var receivesBodyPieces: Bool { false }
    /// Does nothing.
    public func request(_ request: Request, didReceiveBodyPieceOf byteCount: Int) {}
    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {}
    public func request(_ request: Request, didValidateWithError error: CourierError?) {}
    public func request(_ request: Request, didIgnoreCustomResponse reason: String) {}
    public func request(_ request: Request, willRetryAfter delay: TimeInterval) {}
    public func requestIsRetrying(_ request: Request) {}
    public func request<Value: Sendable>(
        _ request: DataRequest,
        didParseResponse response: DataResponse<Value, CourierError>
    ) {}
    public func request(_ request: UploadRequest, didCreateUploadable body: RequestBody) {}
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: CourierError) {}
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {}
    public func request(_ request: DownloadRequest, didFinishDownloadingWith result: Result<URL, CourierError>) {}
    public func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, CourierError>
    ) {}
    public func request<Value: Sendable>(
        _ request: DataStreamRequest,
        didParseStream result: Result<Value, CourierError>
    ) {}
}

private let defaultEventMonitorQueue = DispatchQueue(label: "Courier.eventMonitor")

/// Fans every event out to several monitors, each on its own queue.
///
/// A final class, as in Alamofire: a request reads its monitor for every event, and a reference
/// is copied with one retain.
public final class CompositeEventMonitor: EventMonitor {
    /// The monitors, told in this order.
    public let monitors: [any EventMonitor]
    /// Whether any of ``monitors`` wants body pieces; only those that do are told of them.
    public let receivesBodyPieces: Bool
    /// The monitors by queue, in order: monitors sharing a queue are told of an event in one
    /// block on it, not one block each (a block per event per monitor was most of what
    /// monitors cost a request).
    private let groups: [Group]
    private let pieceGroups: [Group]

    private struct Group: Sendable {
        let queue: DispatchQueue
        var monitors: [any EventMonitor]
    }

    /// Creates a monitor that tells each of `monitors`.
    public init(monitors: [any EventMonitor]) {
        self.monitors = monitors
        groups = Self.grouped(monitors)
        pieceGroups = Self.grouped(monitors.filter(\.receivesBodyPieces))
        receivesBodyPieces = !pieceGroups.isEmpty
    }

    /// Monitors on the same queue in one group, at the place of the first; their order on the
    /// queue is their order in `monitors`.
    private static func grouped(_ monitors: [any EventMonitor]) -> [Group] {
        var groups: [Group] = []
        for monitor in monitors {
            let queue = monitor.queue
            if let index = groups.firstIndex(where: { $0.queue === queue }) {
                groups[index].monitors.append(monitor)
            } else {
                groups.append(Group(queue: queue, monitors: [monitor]))
            }
        }
        return groups
    }

    private func each(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        for group in groups {
            let monitors = group.monitors
            group.queue.async {
                for monitor in monitors { event(monitor) }
            }
        }
    }

    public func requestDidCreate(_ request: Request) { each { $0.requestDidCreate(request) } }
    public func requestDidResume(_ request: Request) { each { $0.requestDidResume(request) } }
    public func requestDidSuspend(_ request: Request) { each { $0.requestDidSuspend(request) } }
    public func requestDidCancel(_ request: Request) { each { $0.requestDidCancel(request) } }
    public func requestDidFinish(_ request: Request) { each { $0.requestDidFinish(request) } }
    public func requestDidResumeTask(_ request: Request) { each { $0.requestDidResumeTask(request) } }
    public func requestDidSuspendTask(_ request: Request) { each { $0.requestDidSuspendTask(request) } }
    public func requestDidCancelTask(_ request: Request) { each { $0.requestDidCancelTask(request) } }
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        each { $0.request(request, didCreateURLRequest: urlRequest) }
    }
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: CourierError) {
        each { $0.request(request, didFailToCreateURLRequestWithError: error) }
    }
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        each { $0.request(request, didCreateInitialURLRequest: urlRequest) }
    }
    /// Calls every monitor.
    public func request(_ request: Request, didAdaptInitialRequest initial: URLRequest, to adapted: URLRequest) {
        each { $0.request(request, didAdaptInitialRequest: initial, to: adapted) }
    }
    public func request(
        _ request: Request,
        didFailToAdaptURLRequest initial: URLRequest,
        withError error: CourierError
    ) {
        each { $0.request(request, didFailToAdaptURLRequest: initial, withError: error) }
    }
    public func request(_ request: Request, didStartAttemptWith urlRequest: URLRequest) {
        each { $0.request(request, didStartAttemptWith: urlRequest) }
    }
    /// Passes the head on: each monitor builds a `URLRequest` only if it reads one.
    public func request(_ request: Request, didStartAttemptWith head: RequestHead) {
        each { $0.request(request, didStartAttemptWith: head) }
    }
    /// Passes the head on: each monitor builds a `URLRequest` only if it reads one.
    public func request(_ request: Request, didCreateRequest head: RequestHead) {
        each { $0.request(request, didCreateRequest: head) }
    }
    /// Passes the head on: each monitor builds a `URLRequest` only if it reads one.
    public func request(_ request: Request, didCreateInitialRequest head: RequestHead) {
        each { $0.request(request, didCreateInitialRequest: head) }
    }
    public func request(_ request: Request, didReceive response: HTTPURLResponse) {
        each { $0.request(request, didReceive: response) }
    }
    /// Passes the head on as it is: each monitor builds an `HTTPURLResponse` only if it reads one
    /// (the head keeps the first built, so several monitors build it once between them).
    public func request(_ request: Request, didReceive head: ResponseHead) {
        each { $0.request(request, didReceive: head) }
    }
    public func request(_ request: Request, willFollow redirect: Redirect) {
        each { $0.request(request, willFollow: redirect) }
    }
    /// Tells the monitors that want body pieces.
    public func request(_ request: Request, didReceiveBodyPieceOf byteCount: Int) {
        for group in pieceGroups {
            let monitors = group.monitors
            group.queue.async {
                for monitor in monitors { monitor.request(request, didReceiveBodyPieceOf: byteCount) }
            }
        }
    }
    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        each { $0.request(request, didCompleteAttemptWith: metrics, error: error) }
    }
    public func request(_ request: Request, didValidateWithError error: CourierError?) {
        each { $0.request(request, didValidateWithError: error) }
    }
    public func request(_ request: Request, didIgnoreCustomResponse reason: String) {
        each { $0.request(request, didIgnoreCustomResponse: reason) }
    }
    public func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        each { $0.request(request, willRetryAfter: delay) }
    }
    public func requestIsRetrying(_ request: Request) { each { $0.requestIsRetrying(request) } }
    public func request<Value: Sendable>(
        _ request: DataRequest,
        didParseResponse response: DataResponse<Value, CourierError>
    ) {
        each { $0.request(request, didParseResponse: response) }
    }
    public func request(_ request: UploadRequest, didCreateUploadable body: RequestBody) {
        each { $0.request(request, didCreateUploadable: body) }
    }
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: CourierError) {
        each { $0.request(request, didFailToCreateUploadableWithError: error) }
    }
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        each { $0.request(request, didCreateDestinationURL: url) }
    }
    public func request(_ request: DownloadRequest, didFinishDownloadingWith result: Result<URL, CourierError>) {
        each { $0.request(request, didFinishDownloadingWith: result) }
    }
    public func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, CourierError>
    ) {
        each { $0.request(request, didParseResponse: response) }
    }
    public func request<Value: Sendable>(
        _ request: DataStreamRequest,
        didParseStream result: Result<Value, CourierError>
    ) {
        each { $0.request(request, didParseStream: result) }
    }
}
