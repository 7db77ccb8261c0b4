import Foundation

extension Task where Failure == any Error, Success: Sendable {
    /// The task's value, or `CancellationError` as soon as the *waiting* task is cancelled.
    ///
    /// `value` ignores the waiter's cancellation; this is for a task several waiters share (a
    /// credential refresh), where one waiter giving up must neither wait on nor cancel the others.
    func valueUnlessWaiterCancelled() async throws -> Success {
        let waiter = Protected(Waiter<Success>.waiting)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Success, any Error>) in
                let cancelledAlready = waiter.withLock { state -> Bool in
                    if case .cancelled = state { return true }
                    state = .suspended(continuation)
                    return false
                }
                if cancelledAlready {
                    continuation.resume(throwing: Swift.CancellationError())
                    return
                }
                Task<Void, Never> {
                    let result = await self.result
                    waiter.withLock { $0.take() }?.resume(with: result)
                }
            }
        } onCancel: {
            waiter.withLock { state in
                let continuation = state.take()
                state = .cancelled
                return continuation
            }?.resume(throwing: Swift.CancellationError())
        }
    }
}

/// Who resumes a ``Task/valueUnlessWaiterCancelled()`` continuation: the first of the result and
/// the cancellation takes it, so it is resumed exactly once.
private enum Waiter<Success: Sendable> {
    case waiting
    case suspended(CheckedContinuation<Success, any Error>)
    case cancelled
    case done

    /// The continuation, if nobody took it yet; afterwards the waiter is `done`.
    mutating func take() -> CheckedContinuation<Success, any Error>? {
        guard case .suspended(let continuation) = self else { return nil }
        self = .done
        return continuation
    }
}
