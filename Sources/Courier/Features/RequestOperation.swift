import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// @unchecked Sendable: Operation guards its own state; this class's (the request, the outcome,
// executing and finished) sits in `state`, behind one lock.
/// One request as a Foundation `Operation`, for code that schedules work on an `OperationQueue`:
/// dependencies, a concurrency limit, `cancelAllOperations()`.
///
/// ```swift
/// let queue = OperationQueue(maxConcurrentOperationCount: 4, name: "uploads")
/// let fetch = RequestOperation(session: session, request: URLRequest(url: url))
/// fetch.completionBlock = { print(fetch.response?.result as Any) }
/// queue.addOperation(fetch)
/// ```
///
/// The operation finishes (``isFinished`` becomes `true`, exactly once) after the request's final
/// attempt; cancelling it cancels the request. Subclass it to customise, as with
/// URLRequestOperation; each override point runs on ``callbackQueue``:
/// ``prepare(_:completion:)`` changes the URLRequest before each attempt and may fail it;
/// ``validateResponseHead(_:)`` rejects a response before its body is read;
/// ``computeRetryInfo(for:dueTo:completion:)`` decides retries, by default with ``retryPolicy``
/// (whose delays a session's retry triggers cut short).
open class RequestOperation: Operation, @unchecked Sendable {
    private struct State {
        var isExecuting = false
        var isFinished = false
        /// Set by the one caller that finishes the operation, before it tells observers.
        var isFinishing = false
        var request: DataRequest?
        var response: DataResponse<Data?, CourierError>?
    }

    /// Where the operation learns that its request ended: never the caller's queue, so a thread
    /// blocked in `waitUntilAllOperationsAreFinished()` (the main thread, say) cannot stall it.
    private static let completionQueue = DispatchQueue(label: "Courier.RequestOperation", attributes: .concurrent)

    /// The session that runs the request.
    public let session: Session
    /// What builds the URLRequest.
    public let requestConvertible: any URLRequestConvertible
    /// Where the override points run: ``prepare(_:completion:)``, ``validateResponseHead(_:)``
    /// and ``computeRetryInfo(for:dueTo:completion:)``.
    public let callbackQueue: DispatchQueue
    /// The policy ``computeRetryInfo(for:dueTo:completion:)`` applies unless overridden.
    public let retryPolicy: RetryPolicy
    /// The statuses that count as success; any other fails the attempt (and may be retried).
    public let acceptableStatusCodes: Range<Int>?
    private let state = Protected(State())

    /// An operation that will send `request` on `session`.
    ///
    /// - Parameters:
    ///   - session: Runs the request; its interceptor, monitors and triggers apply after this operation's.
    ///   - request: The request, such as a `URLRequest`.
    ///   - callbackQueue: Where the override points run.
    ///   - retryPolicy: What ``computeRetryInfo(for:dueTo:completion:)`` applies by default.
    ///   - acceptableStatusCodes: The statuses that count as success (`2xx` by default); `nil`
    ///     accepts any answer.
    public init(
        session: Session,
        request: any URLRequestConvertible,
        callbackQueue: DispatchQueue = .courierCallbacks,
        retryPolicy: RetryPolicy = RetryPolicy(),
        acceptableStatusCodes: Range<Int>? = 200..<300
    ) {
        self.session = session
        self.requestConvertible = request
        self.callbackQueue = callbackQueue
        self.retryPolicy = retryPolicy
        self.acceptableStatusCodes = acceptableStatusCodes
        super.init()
    }

    /// The request, once the operation has started.
    public var request: DataRequest? { state.withLock { $0.request } }
    /// The outcome, once the operation has finished: the body (`nil` or empty when the server
    /// sent none), or why it failed.
    public var response: DataResponse<Data?, CourierError>? { state.withLock { $0.response } }

    /// Always `true`: the operation runs its request without holding a thread.
    open override var isAsynchronous: Bool { true }
    /// Whether the request is running.
    open override var isExecuting: Bool { state.withLock { $0.isExecuting } }
    /// Whether the request has ended, after its last attempt, or the operation was cancelled.
    open override var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Sends the request; the queue calls it.
    open override func start() {
        guard !isCancelled else {
            markFinished(with: nil)
            return
        }
        willChangeValue(forKey: "isExecuting")
        state.withLock { $0.isExecuting = true }
        didChangeValue(forKey: "isExecuting")
        let request = session.request(requestConvertible, interceptor: Hooks(operation: self))
        state.withLock { $0.request = request }
        if let acceptableStatusCodes { request.validate(statusCode: acceptableStatusCodes) }
        request
            .validateResponseHead(queue: callbackQueue) { [self] head in try validateResponseHead(head) }
            .response(queue: Self.completionQueue) { [self] response in markFinished(with: response) }
        if isCancelled { request.cancel() }  // Cancelled while the request was being made.
    }

    /// Cancels the operation and its request.
    open override func cancel() {
        super.cancel()
        request?.cancel()
    }

    // MARK: - Override points

    /// Calls `completion` with the URLRequest to send for the next attempt (each retry starts
    /// again from the one the operation was given), or with an error that fails the attempt (which
    /// ``computeRetryInfo(for:dueTo:completion:)`` may still retry). Called on ``callbackQueue``;
    /// call `completion` exactly once, from any thread. By default, passes the request on unchanged.
    open func prepare(
        _ urlRequest: URLRequest,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(.success(urlRequest))
    }

    /// Checks a response head before its body is read, on ``callbackQueue``; throw to stop the
    /// transfer and fail the attempt. By default, accepts every head.
    open func validateResponseHead(_ response: HTTPURLResponse) throws {}

    /// Calls `completion` with whether a failed attempt runs again, and when. Called on
    /// ``callbackQueue``; call `completion` exactly once, from any thread. By default, what
    /// ``retryPolicy`` decides.
    open func computeRetryInfo(
        for request: Request,
        dueTo error: CourierError,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        let (policy, session) = (retryPolicy, self.session)
        Task { completion(await policy.retry(request, for: session, dueTo: error)) }
    }

    // MARK: - Finishing

    /// Records the outcome and finishes, once: whoever calls first claims the finish under the lock.
    private func markFinished(with response: DataResponse<Data?, CourierError>?) {
        let wasExecuting = state.withLock { state -> Bool? in
            guard !state.isFinished, !state.isFinishing else { return nil }
            state.isFinishing = true
            return state.isExecuting
        }
        guard let wasExecuting else { return }
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        willChangeValue(forKey: "isFinished")
        state.withLock { state in
            state.response = response
            state.isExecuting = false
            state.isFinished = true
            state.request = nil
        }
        didChangeValue(forKey: "isFinished")
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
    }

    /// Routes the request's adaptation and retry decisions to the operation's override points.
    private struct Hooks: RequestInterceptor {
        let operation: RequestOperation

        func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
            let operation = self.operation
            return try await withCheckedThrowingContinuation { continuation in
                operation.callbackQueue.async {
                    operation.prepare(urlRequest) { continuation.resume(with: $0) }
                }
            }
        }

        func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
            let operation = self.operation
            return await withCheckedContinuation { continuation in
                operation.callbackQueue.async {
                    operation.computeRetryInfo(for: request, dueTo: error) { continuation.resume(returning: $0) }
                }
            }
        }
    }
}
