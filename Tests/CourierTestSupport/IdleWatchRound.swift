@_spi(CourierTransport) import Courier
import Foundation

/// A round of an ``IdleWatch`` with two attempts that answer as told, for a test of each timer
/// scheduler: `patient`, due in a minute, joins first; `quick`, due sooner, must set a new timer,
/// asks for one more check 50 ms later, then needs none.
@_spi(CourierTransport)
public enum IdleWatchRound {
    /// Runs the round on `watch`, whose scheduler's clock reads `start` now; returns what went
    /// wrong, nothing when the watch did its work. Bounded to about 20 s.
    public static func problems(on watch: IdleWatch, start: UInt64) async -> [String] {
        let checks = Checks()
        let minute: UInt64 = 60_000_000_000
        let millisecond: UInt64 = 1_000_000
        let patient = Attempt("patient", answers: [start + minute, start + minute, start + minute], checks: checks)
        let quick = Attempt("quick", answers: [start + 150 * millisecond], checks: checks)
        watch.watch(patient, firstCheck: start + minute)
        watch.watch(quick, firstCheck: start + 100 * millisecond)
        // The checks are recorded where the timer fires, so a test run that keeps this task
        // waiting for a while (two cores, every suite at once) still finds them when it runs.
        let checkedBy = ContinuousClock.now + .seconds(10)
        // Two firings check both attempts each: four checks.
        while checks.all.count < 4, ContinuousClock.now < checkedBy { await Task.yield() }
        let seen = checks.all
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
        // `quick` answered `nil` in the second round: it leaves the table once the round ends
        // (just after the last check was recorded); `patient` stays.
        let leaveBy = ContinuousClock.now + .seconds(10)
        while watch.count != 1, ContinuousClock.now < leaveBy { await Task.yield() }
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

    /// The checks attempts were asked, in order. An NSLock, not `Mutex`: ThreadSanitizer on
    /// Linux cannot see through `Mutex`.
    public final class Checks: @unchecked Sendable {  // `checks` is touched only under `lock`.
        private let lock = NSLock()
        private var checks: [Check] = []

        public init() {}

        public var all: [Check] { lock.withLock { checks } }

        func record(_ check: Check) { lock.withLock { checks.append(check) } }
    }

    /// An attempt that answers each check with the next of `answers` (then `nil`), and records
    /// each check in `checks`.
    public final class Attempt: IdleWatched, @unchecked Sendable {  // `answers` is touched only under `lock`.
        private let lock = NSLock()
        private var answers: [UInt64?]
        public let name: String
        private let checks: Checks

        public init(_ name: String, answers: [UInt64?], checks: Checks) {
            self.name = name
            self.answers = answers
            self.checks = checks
        }

        public func checkIdle(at now: UInt64) -> UInt64? {
            checks.record(Check(name: name, at: now))
            return lock.withLock { answers.isEmpty ? nil : answers.removeFirst() }
        }
    }
}
