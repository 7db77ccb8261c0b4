@_spi(CourierTransport) import Courier
import Foundation

/// A round of an ``IdleWatch`` with two attempts that answer as told, for a test of each timer
/// scheduler: `patient`, due in a minute, joins first; `quick`, due sooner, must set a new timer,
/// asks for one more check 50 ms later, then needs none.
@_spi(CourierTransport)
public enum IdleWatchRound {
    /// Runs the round on a watch whose timer `scheduler` sets; returns what went wrong, nothing
    /// when the watch did its work. Bounded to about 20 s.
    public static func problems(with scheduler: any IdleTimerScheduler) async -> [String] {
        let log = Log()
        let watch = IdleWatch(scheduler: LoggingScheduler(base: scheduler, log: log))
        let start = scheduler.now()
        let minute: UInt64 = 60_000_000_000
        let millisecond: UInt64 = 1_000_000
        let patient = Attempt("patient", answers: [start + minute, start + minute, start + minute], log: log)
        let quick = Attempt("quick", answers: [start + 150 * millisecond], log: log)
        watch.watch(patient, firstCheck: start + minute)
        watch.watch(quick, firstCheck: start + 100 * millisecond)
        // Two firings check both attempts each: four checks; then the timer is set a fourth time
        // (for `patient`, `quick`, `quick` again, `patient` again), once the second round is
        // swept. Both are recorded where they happen, and the wait is bounded by a dispatch
        // timer, so a test run that keeps this task from running for a while (two cores, every
        // suite at once) finds them when it runs.
        await log.wait(within: 10) { $0.checks.count >= 4 && $0.timersSet >= 4 }
        let (seen, timersSet) = log.snapshot
        guard seen.count == 4 else { return ["checks seen: \(seen.map(\.name))"] }
        var problems: [String] = []
        // Checked at the earliest time either was due, not at `patient`'s, then at `quick`'s next.
        if !(seen[0].at >= start + 100 * millisecond && seen[0].at < start + 10_000 * millisecond) {
            problems.append("first round at \(seen[0].at - start) ns")
        }
        if seen[2].at < start + 150 * millisecond { problems.append("second round at \(seen[2].at - start) ns") }
        if Set(seen.prefix(2).map(\.name)) != ["patient", "quick"] {
            problems.append("first round checked \(seen.prefix(2).map(\.name))")
        }
        if timersSet != 4 { problems.append("the timer was set \(timersSet) times, not 4") }
        // `quick` answered `nil` in the second round: it left the table; `patient` stays.
        if watch.count != 1 { problems.append("\(watch.count) watched after the rounds, not 1") }
        watch.stopWatching(patient)
        if watch.count != 0 { problems.append("\(watch.count) watched after the last left") }
        return problems
    }

    /// One check an attempt was asked.
    public struct Check: Sendable {
        public let name: String
        public let at: UInt64
    }

    /// What happened: the checks attempts were asked, in order, and how many timers were set.
    /// An NSLock, not `Mutex`: ThreadSanitizer on Linux cannot see through `Mutex`.
    public final class Log: @unchecked Sendable {  // Its `var`s are touched only under `lock`.
        public struct Snapshot: Sendable {
            public var checks: [Check] = []
            public var timersSet = 0
        }

        private let lock = NSLock()
        private var state = Snapshot()
        private var waiter: (until: @Sendable (Snapshot) -> Bool, continuation: CheckedContinuation<Void, Never>)?

        public init() {}

        /// The checks so far, and the timers set.
        public var snapshot: (checks: [Check], timersSet: Int) { lock.withLock { (state.checks, state.timersSet) } }

        func record(_ change: (inout Snapshot) -> Void) {
            let reached = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                change(&state)
                guard let waiter, waiter.until(state) else { return nil }
                self.waiter = nil
                return waiter.continuation
            }
            reached?.resume()
        }

        /// Returns once `until` holds, or after `seconds`. One waiter at a time.
        public func wait(within seconds: Double, until: @escaping @Sendable (Snapshot) -> Bool) async {
            _ = await value(within: seconds) {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let reached = self.lock.withLock { () -> Bool in
                            if until(self.state) || Task.isCancelled { return true }
                            self.waiter = (until, continuation)
                            return false
                        }
                        if reached { continuation.resume() }
                    }
                } onCancel: {
                    let waiting = self.lock.withLock { () -> CheckedContinuation<Void, Never>? in
                        defer { self.waiter = nil }
                        return self.waiter?.continuation
                    }
                    waiting?.resume()
                }
            }
        }
    }

    /// Sets timers with `base`, and counts them in `log`.
    struct LoggingScheduler: IdleTimerScheduler {
        let base: any IdleTimerScheduler
        let log: Log

        func now() -> UInt64 { base.now() }

        func schedule(at deadline: UInt64, _ fire: @escaping @Sendable () -> Void) -> IdleTimerCancellation? {
            defer { log.record { $0.timersSet += 1 } }
            return base.schedule(at: deadline, fire)
        }
    }

    /// An attempt that answers each check with the next of `answers` (then `nil`), and records
    /// each check in `log`.
    public final class Attempt: IdleWatched, @unchecked Sendable {  // `answers` is touched only under `lock`.
        private let lock = NSLock()
        private var answers: [UInt64?]
        public let name: String
        private let log: Log

        public init(_ name: String, answers: [UInt64?], log: Log) {
            self.name = name
            self.answers = answers
            self.log = log
        }

        public func checkIdle(at now: UInt64) -> UInt64? {
            log.record { $0.checks.append(Check(name: name, at: now)) }
            return lock.withLock { answers.isEmpty ? nil : answers.removeFirst() }
        }
    }
}
