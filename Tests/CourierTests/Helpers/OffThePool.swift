import CourierTestSupport
import Foundation

/// `work`'s result and how long it took, computed on the queue ``cpuBound(_:)`` runs work on
/// rather than on Swift concurrency's shared pool.
///
/// The pool has one thread per core (two here): a test that computes for a second or more on it
/// holds back every other test's continuations, and with them timeouts and retry delays, so
/// unrelated timing tests fail. Complexity tests run their work here, one at a time, so that
/// together they take one core and leave the other to the rest of the suite.
func offThePool<Result: Sendable>(
    _ work: @escaping @Sendable () throws -> Result
) async throws -> (result: Result, elapsed: Duration) {
    try await cpuBound {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try work()
        return (result, clock.now - start)
    }
}
