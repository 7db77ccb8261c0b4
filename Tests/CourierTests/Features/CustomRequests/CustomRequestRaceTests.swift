import Courier
import CourierTestSupport
import Foundation
import Testing

/// Custom requests answered and cancelled at random moments from several threads, thousands of
/// times: every response handler runs exactly once, the delegate starts at most once and is told
/// to cancel at most once (only after a start), and a cancelled request never succeeds.
@Suite struct CustomRequestRaceTests {
    private struct Outcome: Sendable {
        var handlerCalls = 0
        var succeeded = false
        /// Cancelled before it was resumed: it must never start nor succeed.
        var cancelledFirst = false
    }

    @Test func randomCancelsLeaveEveryHandlerCalledExactlyOnce() async throws {
        let session = Session(transport: URLSessionTransport())
        let handlerQueue = DispatchQueue(label: "test.race.handlers")
        let runs = 3_000
        var random = SplitMix64(seed: 0x5EED_C0DE)
        let outcomes = TestLock([Outcome](repeating: Outcome(), count: runs))
        let logs = (0..<runs).map { _ in DelegateLog() }
        let finished = Mailbox<Int>()
        for run in 0..<runs {
            // How the delegate answers: inline in its start, or later from another thread.
            let answersInline = Bool.random(using: &random)
            let answersFailing = Int.random(in: 0..<4, using: &random) == 0
            let delegate = ScriptedDelegate(log: logs[run]) { handler, _ in
                let answer: @Sendable () -> Void = {
                    if answersFailing {
                        handler.broadcastFailure(URLError(.timedOut))
                    } else {
                        handler.broadcastResponse(.text("ok"))
                    }
                }
                if answersInline { answer() } else { DispatchQueue.global().async { answer() } }
            }
            let request = session.request(using: delegate, shouldAutomaticallyResume: false)
            request.response(queue: handlerQueue) { response in
                outcomes.withLock {
                    $0[run].handlerCalls += 1
                    $0[run].succeeded = response.error == nil
                }
                finished.put(run)
            }
            // When the cancel comes: never, before the start, at once, or racing from another thread.
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                request.resume()
            case 1:
                outcomes.withLock { $0[run].cancelledFirst = true }
                request.cancel()
                request.resume()
            case 2:
                request.resume()
                request.cancel()
            default:
                DispatchQueue.global().async { request.cancel() }
                request.resume()
            }
            if run.isMultiple(of: 2) { request.suspend().resume() }
        }
        _ = await finished.value(at: runs - 1)
        // One more block on the handlers' queue: a second call of any handler would come before it.
        await withCheckedContinuation { continuation in handlerQueue.async { continuation.resume() } }
        let seen = outcomes.withLock { $0 }
        #expect(seen.allSatisfy { $0.handlerCalls == 1 }, "a handler ran \(seen.map(\.handlerCalls).max() ?? 0) times")
        for (run, outcome) in seen.enumerated() where outcome.cancelledFirst {
            #expect(!outcome.succeeded && logs[run].starts.count == 0, "run \(run) ran after its cancel")
        }
        for (run, log) in logs.enumerated() {
            #expect(log.starts.count <= 1, "run \(run) started \(log.starts.count) times")
            #expect(log.cancels.count <= log.starts.count, "run \(run) was told to cancel without a start")
            #expect(log.events.values.first != "cancel", "run \(run) heard its cancel before its start")
        }
        // Cancels that raced from another thread leave some requests succeeding and some not.
        #expect(seen.contains { $0.succeeded })
        #expect(seen.contains { !$0.succeeded })
        await session.invalidate()
    }
}
