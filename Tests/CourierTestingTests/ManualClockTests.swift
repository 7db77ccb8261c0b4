import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite struct ManualClockTests {
    @Test func sleepersWakeOnlyWhenTheClockReachesTheirDeadlines() async throws {
        let clock = ManualClock()
        let woken = TestLock<[Int]>([])
        let sleepers = (1...3).reversed().map { seconds in
            Task {
                try await clock.sleep(until: ManualClock.Instant(offset: .seconds(seconds)))
                woken.withLock { $0.append(seconds) }
            }
        }
        let ready: Void? = await value(within: hangLimit) { try? await clock.waitForSleepers(count: 3) }
        try #require(ready != nil, "the sleepers never went to sleep")
        clock.advance(by: .milliseconds(1999))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .milliseconds(1))
        #expect(clock.sleeperCount == 1, "an instant reached wakes its sleeper")
        for sleeper in sleepers.suffix(2) { try await sleeper.value }
        #expect(woken.withLock { Set($0) } == [1, 2])
        #expect(clock.now == ManualClock.Instant(offset: .seconds(2)))
        clock.advance(by: .seconds(-5))
        #expect(clock.now.offset == .seconds(2), "time never goes back")
        clock.advance(by: .seconds(1))
        try await sleepers[0].value
        #expect(clock.sleeperCount == 0)
    }

    @Test func aPastDeadlineReturnsAtOnceAndACancelledSleeperThrows() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(5)))
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(1))) }
        let ready: Void? = await value(within: hangLimit) { try? await clock.waitForSleepers(count: 1) }
        try #require(ready != nil)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0, "a cancelled sleeper leaves")
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: clock.now.advanced(by: .seconds(1)))
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func waitingForSleepersCanBeCancelled() async throws {
        let clock = ManualClock()
        let waiter = Task { try await clock.waitForSleepers(count: 1) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }
}
