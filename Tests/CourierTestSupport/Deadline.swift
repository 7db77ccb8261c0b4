import Foundation

/// The value of `operation`, or `nil` if it has none after `seconds`; the operation's task is
/// then cancelled. For tests whose failure would otherwise be a hang.
public func value<Value: Sendable>(
    within seconds: Double,
    of operation: @escaping @Sendable () async -> Value
) async -> Value? {
    // An NSLock, not `Mutex`: ThreadSanitizer on Linux cannot see through `Mutex`.
    let claimed = ClaimLock()
    let claim = { @Sendable in
        claimed.claim()
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

/// A flag that one caller claims, first come first served.
private final class ClaimLock: @unchecked Sendable {  // `isClaimed` is read and written only under `lock`.
    private let lock = NSLock()
    private var isClaimed = false

    /// `true` for the first caller, `false` for every later one.
    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { isClaimed = true }
        return !isClaimed
    }
}
