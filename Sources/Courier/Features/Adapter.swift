import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``RequestInterceptor`` that adapts with a closure and never retries.
public struct Adapter: RequestInterceptor {
    private let handler: Interceptor.AdaptHandler

    /// An adapter that calls `handler` for each attempt.
    public init(_ handler: @escaping Interceptor.AdaptHandler) {
        self.handler = handler
    }

    /// Calls the closure.
    public func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
        try await handler(urlRequest, session)
    }
}
