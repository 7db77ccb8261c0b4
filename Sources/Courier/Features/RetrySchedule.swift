import Foundation

/// The requests of one session that wait out a retry delay, and when each may go, as a value:
/// it reads no clock, sleeps on nothing and takes no lock. Times are durations since the
/// session's clock started (see ``SessionClock``), so a test drives it with any numbers it likes.
///
/// A waiting retry starts once, by whichever comes first:
///
/// | event                                   | releases                                              |
/// |-----------------------------------------|-------------------------------------------------------|
/// | its delay ends (``releaseAtDue(_:retryCount:)``) | that wait, if nothing released it first      |
/// | a trigger fires `.all`                  | every wait whose delay the server did not set         |
/// | a trigger fires, or a request succeeds, for an origin | the waits on that origin the server did not time |
/// | the request finishes (``remove(_:)``)   | that request's wait                                   |
///
/// A server's `Retry-After` is its own word on when to come back: only the delay ends that wait.
struct RetrySchedule {
    /// One request waiting to retry.
    struct Wait: Equatable {
        let requestID: UUID
        /// The request's retry count when it began waiting: the retry it waits for is the next.
        let retryCount: Int
        /// `scheme://host:port`, as ``RetryTriggerEvent/origin(of:)`` names it.
        let origin: String?
        /// Whether the server set the delay (`Retry-After`): then nothing ends it early.
        let isServerDelay: Bool
        /// When the delay ends, since the clock started.
        let due: Duration
    }

    /// What to do with a retry a retrier asked for.
    enum Decision: Equatable {
        /// Start the next attempt now.
        case retryNow
        /// Wait until this time (since the clock started), unless something releases the wait
        /// sooner; `seconds` is the delay as the retrier asked for it (clamped), for event monitors.
        case wait(until: Duration, seconds: TimeInterval)
        /// The delay would end at or past the request's deadline: fail now with the last error
        /// instead of waiting for a retry that could not run.
        case pastDeadline
    }

    private(set) var waits: [UUID: Wait] = [:]

    /// How many requests wait.
    var count: Int { waits.count }

    /// Whether `delay` seconds from `now` leave time before `deadline` (both since the clock
    /// started) for another attempt. A delay that is not a number or below zero counts as none;
    /// one beyond 1e9 seconds (about 32 years) as 1e9, so that no conversion can trap.
    static func decide(delay: TimeInterval?, now: Duration, deadline: Duration?) -> Decision {
        let seconds = delay.map { $0.isNaN ? 0 : min(max($0, 0), 1e9) } ?? 0
        let delay = Duration.nanoseconds(Int64(seconds * 1e9))
        if let deadline, delay >= deadline - now { return .pastDeadline }
        return seconds > 0 ? .wait(until: now + delay, seconds: seconds) : .retryNow
    }

    /// Records that `wait.requestID` waits, replacing any earlier wait of the same request.
    mutating func add(_ wait: Wait) {
        waits[wait.requestID] = wait
    }

    /// Forgets the request's wait, if it has one: it finished, or its retry started.
    @discardableResult
    mutating func remove(_ requestID: UUID) -> Wait? {
        // Every finishing request comes here; most sessions have no wait at all.
        guard !waits.isEmpty else { return nil }
        return waits.removeValue(forKey: requestID)
    }

    /// Takes the request's wait if it is still the one for `retryCount`: the delay of that wait
    /// ended. `nil` if something released it first (its retry has started) or it was removed.
    mutating func releaseAtDue(_ requestID: UUID, retryCount: Int) -> Wait? {
        guard waits[requestID]?.retryCount == retryCount else { return nil }
        return waits.removeValue(forKey: requestID)
    }

    /// Takes the waits `event` ends early, earliest due first: all of them, or those on its
    /// origin, except those whose delay the server set.
    mutating func release(for event: RetryTriggerEvent) -> [Wait] {
        let released = waits.values.filter { wait in
            guard !wait.isServerDelay else { return false }
            switch event {
            case .all: return true
            case .origin(let origin): return wait.origin == origin
            }
        }
        .sorted { $0.due < $1.due }
        for wait in released { waits.removeValue(forKey: wait.requestID) }
        return released
    }
}
