import Foundation

/// What a ``RequestRetrier`` decided about a failed request.
public enum RetryResult: Sendable {
    /// Run the request again now.
    case retry
    /// Run the request again after this many seconds.
    case retryWithDelay(TimeInterval)
    /// Let the request fail with its error.
    case doNotRetry
    /// Let the request fail with ``CourierError/Kind/requestRetryFailed``, carrying this error
    /// and the original one: for example, a token refresh that failed.
    case doNotRetryWithError(any Error)

    /// Whether the request runs again.
    public var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: return true
        case .doNotRetry, .doNotRetryWithError: return false
        }
    }

    /// The delay before the next attempt, when one was asked for.
    public var delay: TimeInterval? {
        if case .retryWithDelay(let delay) = self { return delay }
        return nil
    }

    /// The error to fail with, when the retrier gave one.
    public var error: (any Error)? {
        if case .doNotRetryWithError(let error) = self { return error }
        return nil
    }
}
