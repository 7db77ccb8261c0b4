import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries only requests whose connection was lost, the failure a reused keep-alive connection
/// closed by the server meets most: a ``RetryPolicy`` with no status codes and one error code.
public struct ConnectionLostRetryPolicy: RequestInterceptor {
    /// The policy this one applies.
    public let policy: RetryPolicy

    /// A policy retrying `URLError.networkConnectionLost` up to `retryLimit` times, idempotent
    /// requests only unless `retriesNonIdempotentRequests`.
    public init(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Double = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: TimeInterval = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retriesNonIdempotentRequests: Bool = false
    ) {
        policy = RetryPolicy(
            retryLimit: retryLimit,
            exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods,
            retriesNonIdempotentRequests: retriesNonIdempotentRequests,
            retryableHTTPStatusCodes: [],
            retryableURLErrorCodes: [.networkConnectionLost]
        )
    }

    /// Asks ``policy``.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        await policy.retry(request, for: session, dueTo: error)
    }
}
