import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Something that is not a plain HTTP exchange, wrapped so that it runs as a Courier request:
/// a multi-step upload, a call into another library, a local computation, a request over another
/// protocol. Siesta calls this a `RequestDelegate`; Courier keeps that name for a request's link
/// to its session, as Alamofire does.
///
/// Make the request with ``Session/request(using:interceptor:shouldAutomaticallyResume:)``. It is
/// a ``DataRequest`` like any other: validators, serializers, `async`/`await`, progress, event
/// monitors, cancellation and retriers all work on it. Courier guarantees, whatever the delegate
/// does:
///
/// - ``startUnderlyingOperation(passingResponseTo:)`` is called at most once per delegate, and
///   never after the request was cancelled; a retry starts a fresh delegate from ``repeated()``.
/// - The first answer wins; later ones are dropped and reported to event monitors
///   (``EventMonitor/request(_:didIgnoreCustomResponse:)``).
/// - Once the request is cancelled, no answer is delivered, and the delegate is told once with
///   ``cancelUnderlyingOperation()`` (unless it had answered already). A cancel after the answer
///   does nothing.
/// - An answer given while the request is suspended waits until it resumes.
/// - Progress (``computeProgress()``) is reported only when it grows, never backwards, and is 1.0
///   once a response is delivered.
///
/// ```swift
/// struct Thumbnail: CustomRequestDelegate {
///     let image: Data
///     var requestDescription: String { "thumbnail of \(image.count) bytes" }
///
///     func startUnderlyingOperation(passingResponseTo completionHandler: CustomRequestCompletionHandler) {
///         DispatchQueue.global().async {
///             completionHandler.broadcastResponse(CustomResponse(body: makeThumbnail(image)))
///         }
///     }
///     func cancelUnderlyingOperation() {}
///     func repeated() -> any CustomRequestDelegate { self }
/// }
///
/// let data = try await session.request(using: Thumbnail(image: image)).serializingData().value
/// ```
///
/// | Siesta | Courier |
/// |---|---|
/// | `RequestDelegate` | ``CustomRequestDelegate`` |
/// | `RequestCompletionHandler` | ``CustomRequestCompletionHandler`` |
/// | `ResponseInfo` | ``CustomResponse``, or an `Error` |
/// | `Resource.prepareRequest(using:)` | ``Session/request(using:interceptor:shouldAutomaticallyResume:)`` |
/// | `Request.repeated()` | ``DataRequest/repeated()`` |
/// | `Request.chained(whenCompleted:)` | ``DataRequest/chained(queue:whenCompleted:)`` |
/// | `RequestChainAction` | ``RequestChainAction`` |
public protocol CustomRequestDelegate: Sendable {
    /// Starts the operation. Pass its outcome to `completionHandler` once, from any thread, now or
    /// later: keep the handler for as long as the operation runs. Called on a queue of Courier's;
    /// return soon, and do long work elsewhere, so that a cancel reaches you meanwhile.
    func startUnderlyingOperation(passingResponseTo completionHandler: CustomRequestCompletionHandler)

    /// Stops the operation: the request was cancelled while it ran. Courier delivers nothing the
    /// operation answers afterwards, so this need not (and cannot) change the outcome; it is for
    /// letting go of resources. Called at most once, after ``startUnderlyingOperation(passingResponseTo:)``.
    func cancelUnderlyingOperation()

    /// A delegate that performs the same operation afresh, not yet started: what a retry runs,
    /// and what ``DataRequest/repeated()`` starts from.
    func repeated() -> any CustomRequestDelegate

    /// How far the operation has got, from 0 to 1; polled every ``progressReportingInterval``
    /// while it runs. Values outside 0…1 are clamped, and a value below one already reported is
    /// ignored. By default always 0.
    func computeProgress() -> Double

    /// Seconds between calls to ``computeProgress()``; 1/20 s by default. Values below 1 ms count as 1 ms.
    var progressReportingInterval: TimeInterval { get }

    /// A short description for logs and debugging, in place of a URL: what ``Request/description``
    /// and ``Request/cURLDescription(includingCredentials:)`` show for the request. Keep
    /// credentials out of it.
    var requestDescription: String { get }

    /// What the request reports as its URLRequest (``Request/request``, event monitors, and the
    /// method a retry policy reads to tell an idempotent request); nothing is sent with it. By
    /// default `nil`, which shows as `GET courier-custom:` plus ``requestDescription``. Give one
    /// with a non-idempotent method (such as `POST`) if the operation must not be retried by
    /// ``RetryPolicy`` unless asked.
    var urlRequest: URLRequest? { get }
}

extension CustomRequestDelegate {
    /// No progress: 0 until the response, then 1.
    public func computeProgress() -> Double { 0 }

    /// 1/20 s.
    public var progressReportingInterval: TimeInterval { 0.05 }

    /// The delegate's type name.
    public var requestDescription: String { String(describing: type(of: self)) }

    /// `nil`: the request shows as `GET courier-custom:` plus ``requestDescription``.
    public var urlRequest: URLRequest? { nil }
}
