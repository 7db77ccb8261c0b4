import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Composes adapters and retriers into one ``RequestInterceptor``, or makes one from closures.
///
/// Adapters run in order, each on the previous one's output; the first that throws stops the
/// chain and fails the attempt (the retriers then decide). Retriers are asked in order; the first that does not answer
/// ``RetryResult/doNotRetry`` decides.
///
/// ```swift
/// let interceptor = Interceptor(
///     adaptHandler: { request, _ in
///         var request = request
///         request.setValue("Bearer \(await tokens.current)", forHTTPHeaderField: "Authorization")
///         return request
///     },
///     retryHandler: { request, _, error in
///         request.retryCount < 2 && error.urlError != nil ? .retryWithDelay(0.5) : .doNotRetry
///     }
/// )
/// ```
public struct Interceptor: RequestInterceptor {
    /// Changes an attempt's URLRequest.
    public typealias AdaptHandler = @Sendable (URLRequest, Session) async throws -> URLRequest
    /// Decides whether a failed request is retried.
    public typealias RetryHandler = @Sendable (Request, Session, CourierError) async -> RetryResult

    /// The adapters, run in order.
    public let adapters: [any RequestAdapter]
    /// The retriers, asked in order.
    public let retriers: [any RequestRetrier]

    /// An interceptor from an adapting and a retrying closure.
    public init(adaptHandler: @escaping AdaptHandler, retryHandler: @escaping RetryHandler) {
        self.init(adapters: [Adapter(adaptHandler)], retriers: [Retrier(retryHandler)])
    }

    /// An interceptor from one adapter and one retrier.
    public init(adapter: any RequestAdapter, retrier: any RequestRetrier) {
        self.init(adapters: [adapter], retriers: [retrier])
    }

    /// An interceptor running `adapters`, then the adapting half of each of `interceptors`, and
    /// asking `retriers`, then each of `interceptors`.
    public init(
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) {
        self.adapters = adapters + interceptors.map { $0 as any RequestAdapter }
        self.retriers = retriers + interceptors.map { $0 as any RequestRetrier }
    }

    /// Runs each adapter in order on the previous one's output.
    public func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
        var adapted = urlRequest
        for adapter in adapters {
            adapted = try await adapter.adapt(adapted, for: session)
        }
        return adapted
    }

    /// Runs each adapter in order on the previous one's output, telling each the attempt.
    public func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState) async throws -> URLRequest {
        var adapted = urlRequest
        for adapter in adapters {
            adapted = try await adapter.adapt(adapted, using: state)
        }
        return adapted
    }

    /// The first answer other than ``RetryResult/doNotRetry``, asking the retriers in order.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        for retrier in retriers {
            let result = await retrier.retry(request, for: session, dueTo: error)
            if case .doNotRetry = result { continue }
            return result
        }
        return .doNotRetry
    }
}
