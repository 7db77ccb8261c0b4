@_spi(CourierTransport) import CourierTestSupport
import Foundation
import Testing

@testable @_spi(CourierTransport) import Courier

/// The one timer that times out a transport's idle attempts: its schedule as a value, then the
/// watch on libdispatch with attempts that answer as told. (CourierNIOTests runs the watch on an
/// event loop.)
@Suite struct IdleWatchTests {
    typealias Attempt = IdleWatchRound.Attempt

    private static func at(_ milliseconds: UInt64) -> UInt64 { 1_000_000_000 + milliseconds * 1_000_000 }

    private static func id(_ attempt: Attempt) -> ObjectIdentifier { ObjectIdentifier(attempt) }

    @Test func theTimerIsSetForTheEarliestCheckAndOnlyAgainWhenAnEarlierOneJoins() {
        let checked = IdleWatchRound.Checks()
        let slow = Attempt("slow", answers: [], checks: checked)
        let fast = Attempt("fast", answers: [], checks: checked)
        let later = Attempt("later", answers: [], checks: checked)
        var schedule = IdleSchedule<Attempt>()
        #expect(
            schedule.add(slow, id: Self.id(slow), firstCheck: Self.at(60_000)) == .arm(Self.at(60_000), generation: 1)
        )
        // Due later than the timer: no new timer, the usual case of a request that joins.
        #expect(schedule.add(later, id: Self.id(later), firstCheck: Self.at(61_000)) == .none)
        // Due sooner: a new timer, and the first one is stale.
        #expect(schedule.add(fast, id: Self.id(fast), firstCheck: Self.at(500)) == .arm(Self.at(500), generation: 2))
        #expect(!schedule.isArmed(for: 1))
        #expect(schedule.fire(1) == nil)
        #expect(schedule.count == 3)
        #expect(schedule.remove(Self.id(later)) === later)
        // Leaving twice is harmless (a timed-out attempt also completes).
        #expect(schedule.remove(Self.id(later)) == nil)
        #expect(schedule.count == 2)
    }

    @Test func aFiringChecksEveryAttemptThenSetsTheTimerForTheEarliestAnswer() throws {
        let checked = IdleWatchRound.Checks()
        let first = Attempt("first", answers: [], checks: checked)
        let second = Attempt("second", answers: [], checks: checked)
        let joiner = Attempt("joiner", answers: [], checks: checked)
        var schedule = IdleSchedule<Attempt>()
        _ = schedule.add(first, id: Self.id(first), firstCheck: Self.at(100))
        _ = schedule.add(second, id: Self.id(second), firstCheck: Self.at(200))
        let fired = schedule.fire(1)
        let due = try #require(fired)
        #expect(Set(due.map { ObjectIdentifier($0) }) == [Self.id(first), Self.id(second)])
        #expect(schedule.isChecking && schedule.armedAt == nil)
        // Fired once: the same timer cannot start a second round.
        #expect(schedule.fire(1) == nil)
        // An attempt joining during the checks waits for their end, which sets the timer for it.
        #expect(schedule.add(joiner, id: Self.id(joiner), firstCheck: Self.at(150)) == .none)
        let next = schedule.swept(next: Self.at(300), ended: [Self.id(first)])
        #expect(next == .arm(Self.at(150), generation: 2))
        #expect(schedule.count == 2)
        // Nothing left to watch: no timer.
        _ = schedule.fire(2)
        schedule.remove(Self.id(joiner))
        #expect(schedule.swept(next: nil, ended: [Self.id(second)]) == .none)
        #expect(schedule.count == 0 && schedule.armedAt == nil)
        // A timer that could not be set is forgotten, so the next attempt sets one.
        #expect(schedule.add(first, id: Self.id(first), firstCheck: Self.at(400)) == .arm(Self.at(400), generation: 3))
        schedule.disarm(3)
        #expect(
            schedule.add(second, id: Self.id(second), firstCheck: Self.at(500)) == .arm(Self.at(500), generation: 4)
        )
    }

    @Test func withLibdispatchEachAttemptIsCheckedWhenDueUntilItNeedsNoMore() async {
        let scheduler = DispatchIdleTimerScheduler()
        let problems = await IdleWatchRound.problems(on: IdleWatch(scheduler: scheduler), start: scheduler.now())
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func aWatchLetGoWithItsTimerSetChecksNothingMore() async {
        let checks = IdleWatchRound.Checks()
        let scheduler = DispatchIdleTimerScheduler()
        var watch: IdleWatch? = IdleWatch(scheduler: scheduler)
        weak let weakWatch = watch
        // Still watched when the watch goes: the timer, which holds the watch weakly, cancelled.
        let attempt = Attempt("left", answers: [], checks: checks)
        watch?.watch(attempt, firstCheck: scheduler.now() + 50_000_000)
        watch = nil
        #expect(weakWatch == nil)
        // A probe on a watch of its own, due later than the first timer: once it is checked, the
        // first timer's time has passed, and it checked nothing.
        let probeWatch = IdleWatch(scheduler: scheduler)
        let probe = Attempt("probe", answers: [], checks: checks)
        probeWatch.watch(probe, firstCheck: scheduler.now() + 100_000_000)
        let checkedBy = ContinuousClock.now + .seconds(10)
        while checks.all.isEmpty, ContinuousClock.now < checkedBy { await Task.yield() }
        #expect(checks.all.map(\.name) == ["probe"])
    }
}
