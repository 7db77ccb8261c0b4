import Foundation

/// What a ``CustomRequestDelegate`` passes its operation's outcome to: once, from any thread.
/// Siesta's `RequestCompletionHandler`.
///
/// Keep it for as long as the operation runs. Only the first answer counts; each method returns
/// whether Courier took the answer (`false` once the request was answered or cancelled).
public final class CustomRequestCompletionHandler: Sendable {
    private let task: CustomOperationTask

    init(task: CustomOperationTask) {
        self.task = task
    }

    /// Whether an answer now would be dropped: the request was answered or cancelled. A
    /// long-running operation can check it to stop early.
    public var willIgnore: Bool { task.willIgnore }

    /// Answers with a response, which the request validates and serializes.
    @discardableResult
    public func broadcastResponse(_ response: CustomResponse) -> Bool {
        task.answer(.success(response))
    }

    /// Answers with a failure. A ``CourierError`` reaches the request as itself, a `URLError` as
    /// ``CourierError/Kind/transportFailed`` (so ``RetryPolicy`` reads it as it would a
    /// network's), anything else as ``CourierError/Kind/customRequestFailed``.
    @discardableResult
    public func broadcastFailure(_ error: any Error) -> Bool {
        task.answer(.failure(error))
    }

    /// Answers with `result`: a response or a failure, as the two methods above.
    @discardableResult
    public func broadcast(_ result: Result<CustomResponse, any Error>) -> Bool {
        task.answer(result)
    }
}
