import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CourierNIO

/// The one timer that times out a transport's idle attempts: its schedule as a value, then the
/// watch on a real event loop with attempts that answer as told.
@Suite struct IdleWatchTests {
    /// An attempt that answers each check with the next of `answers` (then `nil`), and tells
    /// `checked` the time of each check.
    private final class Attempt: IdleWatched {
        private let answers: NIOLockedValueBox<[NIODeadline?]>
        let name: String
        let checked: AsyncStream<(name: String, at: NIODeadline)>.Continuation

        init(
            _ name: String,
            answers: [NIODeadline?],
            checked: AsyncStream<(name: String, at: NIODeadline)>.Continuation
        ) {
            self.name = name
            self.answers = NIOLockedValueBox(answers)
            self.checked = checked
        }

        func checkIdle(at now: NIODeadline) -> NIODeadline? {
            checked.yield((name, now))
            return answers.withLockedValue { $0.isEmpty ? nil : $0.removeFirst() }
        }
    }

    private static let base = NIODeadline.uptimeNanoseconds(1_000_000_000)

    private static func at(_ milliseconds: Int64) -> NIODeadline { base + .milliseconds(milliseconds) }

    @Test func theTimerIsSetForTheEarliestCheckAndOnlyAgainWhenAnEarlierOneJoins() {
        let (_, checked) = AsyncStream<(name: String, at: NIODeadline)>.makeStream()
        let slow = Attempt("slow", answers: [], checked: checked)
        let fast = Attempt("fast", answers: [], checked: checked)
        let later = Attempt("later", answers: [], checked: checked)
        var schedule = IdleWatch.Schedule()
        #expect(schedule.add(slow, firstCheck: Self.at(60_000)) == .arm(Self.at(60_000), generation: 1))
        // Due later than the timer: no new timer, the usual case of a request that joins.
        #expect(schedule.add(later, firstCheck: Self.at(61_000)) == .none)
        // Due sooner: a new timer, and the first one is stale.
        #expect(schedule.add(fast, firstCheck: Self.at(500)) == .arm(Self.at(500), generation: 2))
        #expect(!schedule.isArmed(for: 1))
        #expect(schedule.fire(1) == nil)
        #expect(schedule.count == 3)
        schedule.remove(later)
        schedule.remove(later)  // Leaving twice is harmless (a timed-out attempt also completes).
        #expect(schedule.count == 2)
    }

    @Test func aFiringChecksEveryAttemptThenSetsTheTimerForTheEarliestAnswer() throws {
        let (_, checked) = AsyncStream<(name: String, at: NIODeadline)>.makeStream()
        let first = Attempt("first", answers: [], checked: checked)
        let second = Attempt("second", answers: [], checked: checked)
        let joiner = Attempt("joiner", answers: [], checked: checked)
        var schedule = IdleWatch.Schedule()
        _ = schedule.add(first, firstCheck: Self.at(100))
        _ = schedule.add(second, firstCheck: Self.at(200))
        let fired = schedule.fire(1)
        let due = try #require(fired)
        #expect(Set(due.map { ObjectIdentifier($0) }) == [ObjectIdentifier(first), ObjectIdentifier(second)])
        #expect(schedule.isChecking && schedule.armedAt == nil)
        // Fired once: the same timer cannot start a second round.
        #expect(schedule.fire(1) == nil)
        // An attempt joining during the checks waits for their end, which sets the timer for it.
        #expect(schedule.add(joiner, firstCheck: Self.at(150)) == .none)
        let next = schedule.swept(next: Self.at(300), ended: [ObjectIdentifier(first)])
        #expect(next == .arm(Self.at(150), generation: 2))
        #expect(schedule.count == 2)
        // Nothing left to watch: no timer.
        _ = schedule.fire(2)
        schedule.remove(joiner)
        #expect(schedule.swept(next: nil, ended: [ObjectIdentifier(second)]) == .none)
        #expect(schedule.count == 0 && schedule.armedAt == nil)
        // A timer that could not be set is forgotten, so the next attempt sets one.
        #expect(schedule.add(first, firstCheck: Self.at(400)) == .arm(Self.at(400), generation: 3))
        schedule.disarm(3)
        #expect(schedule.add(second, firstCheck: Self.at(500)) == .arm(Self.at(500), generation: 4))
    }

    @Test func onAnEventLoopEachAttemptIsCheckedWhenDueUntilItNeedsNoMore() async throws {
        let watch = IdleWatch(eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let (checks, checked) = AsyncStream<(name: String, at: NIODeadline)>.makeStream()
        let start = NIODeadline.now()
        // `patient` joins first, due in a minute; `quick`, due sooner, must set a new timer. `quick`
        // asks for one more check 50 ms later, then needs none.
        let patient = Attempt(
            "patient",
            answers: [start + .seconds(60), start + .seconds(60), start + .seconds(60)],
            checked: checked
        )
        let quick = Attempt("quick", answers: [start + .milliseconds(150)], checked: checked)
        watch.watch(patient, firstCheck: start + .seconds(60))
        watch.watch(quick, firstCheck: start + .milliseconds(100))
        let bounded = Task {
            var iterator = checks.makeAsyncIterator()
            var seen: [(name: String, at: NIODeadline)] = []
            // Two firings check both attempts each: four checks.
            while seen.count < 4, let check = await iterator.next() { seen.append(check) }
            return seen
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(5))
            bounded.cancel()
            checked.finish()
        }
        let seen = await bounded.value
        timeout.cancel()
        try #require(seen.count == 4, "\(seen.map(\.name))")
        // Checked at the earliest time either was due, not at `patient`'s, then at `quick`'s next.
        #expect(seen[0].at >= start + .milliseconds(100) && seen[0].at < start + .seconds(5))
        #expect(seen[2].at >= start + .milliseconds(150))
        #expect(Set(seen.prefix(2).map(\.name)) == ["patient", "quick"])
        // `quick` answered `nil` in the second round: it leaves the table once the round ends
        // (just after the last check was reported); `patient` stays.
        let leaveBy = ContinuousClock.now + .seconds(5)
        while watch.count != 1, ContinuousClock.now < leaveBy { await Task.yield() }
        #expect(watch.count == 1)
        watch.stopWatching(patient)
        #expect(watch.count == 0)
    }
}
