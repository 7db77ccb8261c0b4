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

/// How long a test waits for something that should happen at once (a stub's reply, a sleeper on
/// a `ManualClock`) before it calls it a hang.
///
/// Long on purpose: on a 2-core machine Swift concurrency's pool has two threads, and the parallel
/// suite's CPU-bound tests (exhaustive walks, linear-time checks) have held both for 20 s at the
/// start of a run. Such a test's own work takes milliseconds; only a real hang waits this out.
public let hangLimit: Double = 60
