import Foundation

/// `work`'s result and how long it took, computed on a thread of its own rather than on Swift
/// concurrency's shared pool.
///
/// The pool has one thread per core (two here): a test that computes for a second or more on it
/// holds back every other test's continuations, and with them timeouts and retry delays, so
/// unrelated timing tests fail. Complexity tests run their work here, and check its result on
/// the test's own task (expectations belong to the test, not to this thread).
func offThePool<Result: Sendable>(
    _ work: @escaping @Sendable () throws -> Result
) async throws -> (result: Result, elapsed: Duration) {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            let clock = ContinuousClock()
            let start = clock.now
            do {
                let result = try work()
                continuation.resume(returning: (result, clock.now - start))
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.start()
    }
}
