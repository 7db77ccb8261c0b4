import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request chain does once the request it waits for has completed: the answer of
/// ``DataRequest/chained(queue:whenCompleted:)``'s closure, as Siesta's `RequestChainAction`.
public enum RequestChainAction: Sendable {
    /// Wait for `request` (the chain starts it) and end with its response.
    case passTo(DataRequest)
    /// End now with `response`, in place of the one that just completed.
    case useResponse(CustomResponse)
    /// End now with `error` (as ``CustomRequestCompletionHandler/broadcastFailure(_:)`` reports it).
    case useFailure(any Error)
    /// End now with the response of the request that just completed, success or failure.
    case useThisResponse
}

extension DataRequest {
    /// A request whose outcome `callback` decides once this one completes: keep its response,
    /// use another, or pass to a new request (a token refresh then the same call again, say), as
    /// Siesta's `chained(whenCompleted:)`.
    ///
    /// ```swift
    /// let profile = session.request(profileURL).validate()
    ///     .chained { response in
    ///         guard response.response?.statusCode == 401 else { return .useThisResponse }
    ///         return .passTo(session.request(refreshURL).chained { _ in .passTo(session.request(profileURL)) })
    ///     }
    /// let data = try await profile.serializingData().value
    /// ```
    ///
    /// The chain is a custom request (see ``CustomRequestDelegate``): validate, serialize and
    /// await it as any other. It starts this request when it starts, and starts at once if this
    /// one has. Cancelling the chain cancels whichever link is running, and `callback` is then not
    /// called: put clean-up in the chain's own response handler, which is always called once.
    ///
    /// Each link is retried by its own and the session's retriers; the chain is not retried by
    /// the session's (that would retry every link twice over). A retrier added to the chain
    /// retries it whole, from a ``repeated()`` copy of this request, which has none of its
    /// validators: validate in `callback`, or on the chain.
    ///
    /// `.useThisResponse` passes a failed link's error on, without its status, headers or body.
    ///
    /// - Parameters:
    ///   - queue: Where `callback` runs.
    ///   - callback: Decides, from this request's response (after its validators), what the
    ///     chain does.
    public func chained(
        queue: DispatchQueue = .courierCallbacks,
        whenCompleted callback: @escaping @Sendable (DataResponse<Data?, CourierError>) -> RequestChainAction
    ) -> DataRequest {
        let chain = sessionForRepeat.request(
            using: RequestChainDelegate(wrapping: self, queue: queue, callback),
            usesSessionInterceptor: false
        )
        if !isInitialized { chain.resume() }
        return chain
    }
}

/// The custom request behind ``DataRequest/chained(queue:whenCompleted:)``: one run of the chain.
struct RequestChainDelegate: CustomRequestDelegate {
    typealias Callback = @Sendable (DataResponse<Data?, CourierError>) -> RequestChainAction

    private let wrapped: DataRequest
    private let queue: DispatchQueue
    private let callback: Callback
    private let run = ChainRun()
    let requestDescription: String
    let urlRequest: URLRequest?

    init(wrapping request: DataRequest, queue: DispatchQueue, _ callback: @escaping Callback) {
        wrapped = request
        self.queue = queue
        self.callback = callback
        // The first link's method: a retrier of the chain then retries it only if it may retry that.
        let first = request.customOperation?.head.urlRequest ?? (try? request.convertible.asURLRequest())
        urlRequest = first
        let described =
            request.customOperation?.original.requestDescription
            ?? first.map { "\($0.httpMethod ?? "GET") \($0.url?.absoluteString ?? "")" } ?? "a request"
        requestDescription = "Chain[\(described)]"
    }

    func startUnderlyingOperation(passingResponseTo completionHandler: CustomRequestCompletionHandler) {
        guard run.follow(wrapped) else { return }
        wrapped.response(queue: queue) { [run, callback, queue] response in
            // A cancelled chain calls no callback. The handler knows at once (the run hears of
            // the cancel a moment later, from the delegate's queue).
            guard !run.isCancelled, !completionHandler.willIgnore else { return }
            switch callback(response) {
            case .useThisResponse:
                completionHandler.broadcast(Self.outcome(of: response))
            case .useResponse(let response):
                completionHandler.broadcastResponse(response)
            case .useFailure(let error):
                completionHandler.broadcastFailure(error)
            case .passTo(let next):
                guard !completionHandler.willIgnore, run.follow(next) else {
                    next.cancel()
                    return
                }
                next.response(queue: queue) { response in
                    completionHandler.broadcast(Self.outcome(of: response))
                }
                next.resume()
            }
        }
        wrapped.resume()
    }

    func cancelUnderlyingOperation() {
        run.cancel()
    }

    func repeated() -> any CustomRequestDelegate {
        RequestChainDelegate(wrapping: wrapped.repeated(), queue: queue, callback)
    }

    /// A link's response as the chain's answer: its failure, or its status, headers and body.
    static func outcome(of response: DataResponse<Data?, CourierError>) -> Result<CustomResponse, any Error> {
        if let error = response.error { return .failure(error) }
        return .success(
            CustomResponse(
                statusCode: response.head?.statusCode ?? 200,
                headers: response.head?.headers ?? [],
                body: response.data ?? Data(),
                url: response.head?.url
            )
        )
    }
}

/// Which link of a chain is running, so that a cancel reaches it.
final class ChainRun: Sendable {
    private enum State {
        case running(DataRequest?)
        case cancelled
    }

    private let state = Protected(State.running(nil))

    var isCancelled: Bool {
        state.withLock { if case .cancelled = $0 { true } else { false } }
    }

    /// Makes `link` the running one, or cancels it if the chain was cancelled; `false` then.
    func follow(_ link: DataRequest) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard case .running = state else { return false }
            state = .running(link)
            return true
        }
        if !accepted { link.cancel() }
        return accepted
    }

    /// Cancels the chain and its running link.
    func cancel() {
        let link = state.withLock { state -> DataRequest? in
            defer { state = .cancelled }
            if case .running(let link) = state { return link }
            return nil
        }
        link?.cancel()
    }
}
