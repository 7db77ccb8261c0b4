import Foundation

/// Runs async work to completion from synchronous code, blocking the calling thread.
///
/// `@unchecked Sendable`: the one mutable member, `outcome`, sits behind `lock`.
final class BlockingRun: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<Void, any Error> = .success(())
    private let finished = DispatchSemaphore(value: 0)

    /// Runs `work` on the global executor and waits for it; rethrows what it throws.
    static func wait(for work: @escaping @Sendable () async throws -> Void) throws {
        let run = BlockingRun()
        Task {
            do {
                try await work()
            } catch {
                run.lock.withLock { run.outcome = .failure(error) }
            }
            run.finished.signal()
        }
        run.finished.wait()
        try run.lock.withLock { run.outcome }.get()
    }
}
