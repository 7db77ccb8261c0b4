import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``RequestInterceptor`` that decides retries with a closure and leaves requests unchanged.
public struct Retrier: RequestInterceptor {
    private let handler: Interceptor.RetryHandler

    /// A retrier that calls `handler` for each failed attempt.
    public init(_ handler: @escaping Interceptor.RetryHandler) {
        self.handler = handler
    }

    /// Calls the closure.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        await handler(request, session, error)
    }
}
