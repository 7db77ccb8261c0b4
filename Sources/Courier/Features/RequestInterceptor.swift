import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Both a ``RequestAdapter`` and a ``RequestRetrier``: the one type to implement for behaviour
/// that spans attempts, such as adding a token and refreshing it after a `401`.
///
/// Both methods have defaults that change nothing: the URLRequest is sent as it is, and nothing
/// is retried. Give a session one with `Session(interceptor:)`, or a single request one with the
/// `interceptor:` parameter of ``Session/request(_:method:headers:interceptor:shouldAutomaticallyResume:requestModifier:)``;
/// a request's own interceptor runs before the session's.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Returns `urlRequest` unchanged: implement it to adapt.
    public func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
        urlRequest
    }

    /// Answers ``RetryResult/doNotRetry``: implement it to retry.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        .doNotRetry
    }
}
