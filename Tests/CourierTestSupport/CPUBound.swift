import Dispatch

/// Runs `body`, a test's long computation, on a serial queue of its own instead of Swift
/// concurrency's shared pool, keeping its task (and so `#expect` and `Issue.record` inside it).
///
/// The shared pool has one thread per core, two here. A test that computes for seconds on it
/// holds back every other test's continuations (their timeouts, retry delays and handshakes) at a
/// full run's start, when every suite begins at once, and unrelated timing tests fail. On one
/// queue, such tests also take one core between them, not both.
public func cpuBound<Result>(_ body: () async throws -> Result) async rethrows -> Result {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
        return try await withTaskExecutorPreference(CPUBoundExecutor.shared, operation: body)
    }
    return try await body()
}

/// The queue ``cpuBound(_:)`` runs work on, as a task executor.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class CPUBoundExecutor: TaskExecutor {
    static let shared = CPUBoundExecutor()

    private let queue = DispatchQueue(label: "courier.tests.cpu-bound")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
