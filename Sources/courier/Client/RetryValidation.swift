import Courier
import Foundation

/// The statuses an attempt under `--retry` lets through validation: all of them, except the
/// status of a response that `policy` would retry now.
///
/// ``RetryPolicy`` only sees failures, so a status it retries must fail validation; but the
/// final answer (the last attempt, or one the policy does not retry: a `POST`, a `429` without
/// `Retry-After`) must not, or its body would be dropped instead of printed. The decision is the
/// policy's own (``RetryPolicy/shouldRetry(_:dueTo:)`` and its limit), made when each attempt's
/// head is validated. The set is read then, through `validate(statusCode:)`, which asks a
/// sequence whether it contains the status.
struct RetryValidation: Sequence, Sendable {
    /// Weak: the request keeps its validators, and so this.
    private final class RequestReference: Sendable {
        weak let request: Request?
        init(_ request: Request) { self.request = request }
    }

    /// Every status `courier` accepts at all.
    static let allStatuses = Array(100..<600)

    private let reference: RequestReference
    private let policy: RetryPolicy

    /// The statuses `request`'s attempts accept while `policy` retries it.
    init(request: Request, policy: RetryPolicy) {
        self.reference = RequestReference(request)
        self.policy = policy
    }

    func makeIterator() -> IndexingIterator<[Int]> {
        guard let request = reference.request, let status = request.response?.statusCode,
            Self.policy(policy, wouldRetry: request, status: status)
        else { return Self.allStatuses.makeIterator() }
        return Self.allStatuses.filter { $0 != status }.makeIterator()
    }

    /// Whether `policy` would retry `request` after an attempt answered `status`, budget and
    /// deadline aside.
    static func policy(_ policy: RetryPolicy, wouldRetry request: Request, status: Int) -> Bool {
        guard request.retryCount < policy.retryLimit else { return false }
        let failure = CourierError.responseValidationFailed(.unacceptableStatusCode(code: status))
        return policy.shouldRetry(request, dueTo: failure)
    }
}
