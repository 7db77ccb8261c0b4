import Foundation
import Synchronization

/// The value of `operation`, or `nil` if it has none after `seconds`; the operation's task is
/// then cancelled. For tests whose failure would otherwise be a hang.
func value<Value: Sendable>(
    within seconds: Double,
    of operation: @escaping @Sendable () async -> Value
) async -> Value? {
    let claimed = Mutex(false)
    let claim = { @Sendable in
        claimed.withLock { wasClaimed in
            defer { wasClaimed = true }
            return !wasClaimed
        }
    }
    return await withCheckedContinuation { continuation in
        let task = Task {
            let value = await operation()
            if claim() { continuation.resume(returning: value) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard claim() else { return }
            task.cancel()
            continuation.resume(returning: nil)
        }
    }
}
