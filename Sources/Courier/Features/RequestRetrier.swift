import Foundation

/// Decides whether a failed request runs again, and when.
///
/// A session asks its retriers whenever an attempt fails: a transport error (connection lost,
/// timed out), a validation failure (such as `validate()` rejecting a `503`) or an adapter's
/// error. Requests cancelled by their caller are never retried; a transport that was shut down
/// fails with `URLError(.cancelled)`, which a retrier sees and should not retry. Read
/// ``Request/retryCount``, ``Request/response`` and the error to decide; each retry re-adapts the
/// original URLRequest and appends to ``Request/requests``.
public protocol RequestRetrier: Sendable {
    /// Whether `request`, which failed with `error`, should be retried.
    func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult
}
