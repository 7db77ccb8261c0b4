import CourierTestServer
@_spi(CourierTransport) import CourierTestSupport
import Foundation
import Testing

@testable @_spi(CourierTransport) import Courier
@testable import CourierNIO

/// The one timer that times out a transport's idle attempts: its schedule as a value, then the
/// watch on libdispatch with attempts that answer as told. (CourierNIOTests runs the watch on an
/// event loop.)
@Suite struct IdleWatchTests {
    typealias Attempt = IdleWatchRound.Attempt

    private static func at(_ milliseconds: UInt64) -> UInt64 { 1_000_000_000 + milliseconds * 1_000_000 }

    private static func id(_ attempt: Attempt) -> ObjectIdentifier { ObjectIdentifier(attempt) }

    @Test func theTimerIsSetForTheEarliestCheckAndOnlyAgainWhenAnEarlierOneJoins() {
        let checked = IdleWatchRound.Log()
        let slow = Attempt("slow", answers: [], log: checked)
        let fast = Attempt("fast", answers: [], log: checked)
        let later = Attempt("later", answers: [], log: checked)
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
        let checked = IdleWatchRound.Log()
        let first = Attempt("first", answers: [], log: checked)
        let second = Attempt("second", answers: [], log: checked)
        let joiner = Attempt("joiner", answers: [], log: checked)
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
        let problems = await IdleWatchRound.problems(with: DispatchIdleTimerScheduler())
        #expect(problems.isEmpty, "\(problems)")
    }

    /// Sets no timer of its own: it records each one, and the test fires or checks them.
    final class ManualScheduler: IdleTimerScheduler, @unchecked Sendable {  // `timers` is touched only under `lock`.
        struct Timer {
            let deadline: UInt64
            let fire: @Sendable () -> Void
            var isCancelled = false
        }

        private let lock = NSLock()
        private var timers: [Timer] = []
        private var refusing: Bool

        init(refuses: Bool = false) { self.refusing = refuses }

        /// Whether the scheduler refuses timers, as a loop that shut down does.
        var refuses: Bool {
            get { lock.withLock { refusing } }
            set { lock.withLock { refusing = newValue } }
        }

        var all: [Timer] { lock.withLock { timers } }

        func now() -> UInt64 { 0 }

        func schedule(at deadline: UInt64, _ fire: @escaping @Sendable () -> Void) -> IdleTimerCancellation? {
            if refuses { return nil }
            let index = lock.withLock { () -> Int in
                timers.append(Timer(deadline: deadline, fire: fire))
                return timers.count - 1
            }
            return IdleTimerCancellation { [self] in lock.withLock { timers[index].isCancelled = true } }
        }
    }

    @Test func aTimerSetForAnEarlierAttemptCancelsTheOneBefore() {
        let scheduler = ManualScheduler()
        let watch = IdleWatch(scheduler: scheduler)
        let log = IdleWatchRound.Log()
        let slow = Attempt("slow", answers: [], log: log)
        let fast = Attempt("fast", answers: [], log: log)
        watch.watch(slow, firstCheck: 60_000)
        watch.watch(fast, firstCheck: 500)
        #expect(scheduler.all.map(\.deadline) == [60_000, 500])
        #expect(scheduler.all.map(\.isCancelled) == [true, false])
        // The stale timer, had it fired anyway, checks nothing; the current one checks both.
        scheduler.all[0].fire()
        #expect(log.snapshot.checks.isEmpty)
        scheduler.all[1].fire()
        #expect(Set(log.snapshot.checks.map(\.name)) == ["slow", "fast"])
        // Both answered `nil`: nothing is left, and no timer is set.
        #expect(watch.count == 0 && scheduler.all.count == 2)
    }

    @Test func aWatchLetGoCancelsItsTimer() {
        let scheduler = ManualScheduler()
        var watch: IdleWatch? = IdleWatch(scheduler: scheduler)
        weak let weakWatch = watch
        let attempt = Attempt("left", answers: [], log: IdleWatchRound.Log())
        watch?.watch(attempt, firstCheck: 1_000)
        #expect(scheduler.all.map(\.isCancelled) == [false])
        watch = nil
        #expect(weakWatch == nil)
        #expect(scheduler.all.map(\.isCancelled) == [true])
        // The timer holds the watch weakly: fired late, it does nothing.
        scheduler.all[0].fire()
        #expect(attempt.name == "left")
    }

    @Test func aTimerThatCannotBeSetIsTriedAgainByTheNextAttempt() {
        let scheduler = ManualScheduler(refuses: true)
        let watch = IdleWatch(scheduler: scheduler)
        let log = IdleWatchRound.Log()
        watch.watch(Attempt("first", answers: [], log: log), firstCheck: 1_000)
        #expect(watch.count == 1 && scheduler.all.isEmpty)
        // Due later than the refused timer would have fired: it is set all the same.
        scheduler.refuses = false
        watch.watch(Attempt("second", answers: [], log: log), firstCheck: 2_000)
        #expect(scheduler.all.map(\.deadline) == [2_000])
        scheduler.all[0].fire()
        #expect(Set(log.snapshot.checks.map(\.name)) == ["first", "second"])
    }
}

/// Each transport's attempts join its idle watch and leave it however they end, so that no ended
/// attempt (and the request it holds) waits in the table for the timer.
@Suite struct TransportIdleWatchTests {
    private static func watched(_ transport: any Transport) -> Int {
        switch transport {
        case let transport as URLSessionTransport: return transport.idleWatch.count
        case let transport as AsyncHTTPClientTransport: return transport.idleWatch.count
        default: return -1
        }
    }

    @Test(arguments: TransportKind.allCases)
    func finishedCancelledAndTimedOutAttemptsLeaveTheWatch(transport kind: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let transport = kind.makeTransport()
            let session = Session(
                configuration: Session.Configuration { $0.timeoutInterval = 30 },
                transport: transport
            )
            let finished = await session.request(server.url("/get")).validate().serializingData().result
            #expect(finished.failure == nil)
            #expect(Self.watched(transport) == 0)
            let stalled = await failure(
                of: session.request(server.url("/fault/hang?seconds=60")) { $0.timeoutInterval = 0.3 }
            )
            #expect(stalled?.urlError?.code == .timedOut)
            #expect(Self.watched(transport) == 0)
            // In flight while watched, then cancelled: it leaves once its transport task ends.
            let hanging = session.request(server.url("/fault/hang?seconds=60"))
            let outcome = Task { await failure(of: hanging) }
            let watchedBy = ContinuousClock.now + .seconds(10)
            while Self.watched(transport) == 0, ContinuousClock.now < watchedBy { await Task.yield() }
            #expect(Self.watched(transport) == 1)
            hanging.cancel()
            #expect(await outcome.value?.isExplicitlyCancelledError == true)
            let leftBy = ContinuousClock.now + .seconds(10)
            while Self.watched(transport) != 0, ContinuousClock.now < leftBy { await Task.yield() }
            #expect(Self.watched(transport) == 0)
            await session.invalidate()
        }
    }
}
