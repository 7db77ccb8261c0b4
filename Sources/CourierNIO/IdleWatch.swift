import NIOConcurrencyHelpers
import NIOCore

/// An attempt ``IdleWatch`` checks: one that fails once it goes too long without moving a byte.
protocol IdleWatched: AnyObject, Sendable {
    /// Times the attempt out (or starts to) if it has been idle for too long at `now`; returns
    /// when it should be checked next, or `nil` when it needs no more checks from the watch (it
    /// ended, is ending, or is failing some other way). Asked at every firing of the timer, which
    /// may be earlier than the attempt asked for.
    func checkIdle(at now: NIODeadline) -> NIODeadline?
}

/// Times out a transport's idle attempts with one timer for all of them.
///
/// A timer per attempt cost about 10,000 instructions a request (callgrind, 64 in flight): each
/// went into the event loop's heap of scheduled work on its start and out of it on its end, and
/// that heap holds an entry per request in flight, which every removal searches. Attempts nearly
/// always end long before their timeout, so here they only join and leave a table, and one timer,
/// set for the earliest time any of them could be due, checks them all when it fires and is set
/// again for the next. An attempt's own idle clock (its last byte, its suspension) stays with the
/// attempt, which answers ``IdleWatched/checkIdle(at:)``.
final class IdleWatch: Sendable {
    /// What the lock guards: the schedule, and the timer set for it.
    private struct Locked {
        var schedule = Schedule()
        /// The timer set, and the schedule's generation it was set for.
        var timer: (generation: UInt64, callback: NIOScheduledCallback)?
    }

    /// Where the timer runs; the checks, and the timeouts they find, run there too.
    private let eventLoop: any EventLoop
    private let state = NIOLockedValueBox(Locked())

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Checks `attempt`, first no later than at `firstCheck`, until it leaves with
    /// ``stopWatching(_:)`` or a check answers `nil`.
    func watch(_ attempt: any IdleWatched, firstCheck: NIODeadline) {
        let action = state.withLockedValue { $0.schedule.add(attempt, firstCheck: firstCheck) }
        perform(action)
    }

    /// Stops checking `attempt`; nothing happens if it is not watched.
    func stopWatching(_ attempt: any IdleWatched) {
        state.withLockedValue { $0.schedule.remove(attempt) }
    }

    /// How many attempts are watched (for tests).
    var count: Int { state.withLockedValue { $0.schedule.count } }

    private func perform(_ action: Schedule.Action) {
        guard case .arm(let deadline, let generation) = action else { return }
        let callback: NIOScheduledCallback
        do {
            callback = try eventLoop.scheduleCallback(at: deadline, handler: Tick(watch: self, generation: generation))
        } catch {
            // The loop refused the timer (shut down, from its own thread); a later watch arms again.
            state.withLockedValue { $0.schedule.disarm(generation) }
            return
        }
        // Set again meanwhile (an earlier attempt joined), or fired already: this timer is not
        // the schedule's to keep.
        let stale = state.withLockedValue { state -> NIOScheduledCallback? in
            guard state.schedule.isArmed(for: generation) else { return callback }
            let replaced = state.timer?.callback
            state.timer = (generation, callback)
            return replaced
        }
        stale?.cancel()
    }

    /// The timer set for `generation` fired: checks every attempt, outside the lock (a check that
    /// times one out ends it, which may start the next attempt), then sets the next timer.
    private func fire(_ generation: UInt64) {
        let due = state.withLockedValue { state -> [any IdleWatched]? in
            guard let due = state.schedule.fire(generation) else { return nil }
            if state.timer?.generation == generation { state.timer = nil }
            return due
        }
        guard let due else { return }
        let now = NIODeadline.now()
        var next: NIODeadline?
        var ended: [ObjectIdentifier] = []
        for attempt in due {
            if let check = attempt.checkIdle(at: now) {
                next = next.map { min($0, check) } ?? check
            } else {
                ended.append(ObjectIdentifier(attempt))
            }
        }
        // `due` holds the attempts until the table is updated: an ended one is freed only after
        // the lock (its deinit, and its request's, run no code under it), and none's address can
        // go to a new attempt that joins meanwhile and be taken out in its place.
        let action = withExtendedLifetime(due) {
            state.withLockedValue { $0.schedule.swept(next: next, ended: ended) }
        }
        perform(action)
    }

    private struct Tick: NIOScheduledCallbackHandler, Sendable {
        let watch: IdleWatch
        let generation: UInt64

        func handleScheduledCallback(eventLoop: some EventLoop) {
            watch.fire(generation)
        }
    }
}

extension IdleWatch {
    /// The watched attempts and when the timer should fire, as a value: each event returns what
    /// to do about the timer, and ``IdleWatch`` does it after unlocking.
    struct Schedule {
        enum Action: Equatable {
            case none
            /// Set a timer for `deadline`, standing for `generation`; any earlier timer is stale.
            case arm(NIODeadline, generation: UInt64)
        }

        private var watched: [ObjectIdentifier: any IdleWatched] = [:]
        /// When the current timer fires; `nil` when none is set.
        private(set) var armedAt: NIODeadline?
        /// Counts the timers set, so that a stale one is told apart when it fires.
        private(set) var generation: UInt64 = 0
        /// Between a timer firing and the checks it started being done.
        private(set) var isChecking = false
        /// The earliest first check of the attempts that joined while ``isChecking``.
        private var joinedWhileChecking: NIODeadline?

        var count: Int { watched.count }

        /// `attempt` joins, to be checked first at `firstCheck`.
        mutating func add(_ attempt: any IdleWatched, firstCheck: NIODeadline) -> Action {
            watched[ObjectIdentifier(attempt)] = attempt
            if isChecking {
                // The timer is set once the checks are done, early enough for this one too.
                joinedWhileChecking = joinedWhileChecking.map { min($0, firstCheck) } ?? firstCheck
                return .none
            }
            if let armedAt, armedAt <= firstCheck { return .none }
            return arm(at: firstCheck)
        }

        mutating func remove(_ attempt: any IdleWatched) {
            watched.removeValue(forKey: ObjectIdentifier(attempt))
        }

        /// Whether the timer of `generation` is still the one set.
        func isArmed(for generation: UInt64) -> Bool {
            armedAt != nil && self.generation == generation
        }

        /// The timer of `generation` could not be set.
        mutating func disarm(_ generation: UInt64) {
            if isArmed(for: generation) { armedAt = nil }
        }

        /// The timer of `generation` fired: returns the attempts to check, or `nil` for a stale
        /// timer.
        mutating func fire(_ generation: UInt64) -> [any IdleWatched]? {
            guard isArmed(for: generation), !isChecking else { return nil }
            armedAt = nil
            isChecking = true
            return Array(watched.values)
        }

        /// The checks are done: `next` is the earliest check they asked for, and `ended` the
        /// attempts that need none (an attempt that ended before it joined, say).
        mutating func swept(next: NIODeadline?, ended: [ObjectIdentifier]) -> Action {
            for id in ended { watched.removeValue(forKey: id) }
            isChecking = false
            let joined = joinedWhileChecking
            joinedWhileChecking = nil
            let candidates = [next, joined].compactMap { $0 }
            guard !watched.isEmpty, let earliest = candidates.min() else { return .none }
            return arm(at: earliest)
        }

        private mutating func arm(at deadline: NIODeadline) -> Action {
            generation &+= 1
            armedAt = deadline
            return .arm(deadline, generation: generation)
        }
    }
}
