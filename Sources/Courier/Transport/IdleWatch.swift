import Foundation

/// An attempt an ``IdleWatch`` checks: one that fails once it goes too long without moving a byte.
///
/// Times are uptime nanoseconds on the clock of the watch's ``IdleTimerScheduler``.
@_spi(CourierTransport)
public protocol IdleWatched: AnyObject, Sendable {
    /// Times the attempt out (or starts to) if it has been idle for too long at `now`; returns
    /// when it should be checked next, or `nil` when it needs no more checks from the watch (it
    /// ended, is ending, or is failing some other way). Asked at every firing of the timer, which
    /// may be earlier than the attempt asked for.
    func checkIdle(at now: UInt64) -> UInt64?
}

/// Where an ``IdleWatch`` sets its one timer: an event loop, a dispatch queue.
@_spi(CourierTransport)
public protocol IdleTimerScheduler: Sendable {
    /// Now, in uptime nanoseconds on the clock the timers run by.
    func now() -> UInt64

    /// Calls `fire` once, at about `deadline`; returns what cancels it, or `nil` when no timer
    /// could be set (a loop shut down).
    func schedule(at deadline: UInt64, _ fire: @escaping @Sendable () -> Void) -> IdleTimerCancellation?
}

/// Cancels a timer an ``IdleTimerScheduler`` set.
@_spi(CourierTransport)
public struct IdleTimerCancellation: Sendable {
    private let cancelTimer: @Sendable () -> Void

    /// Cancels with `cancel`.
    public init(_ cancel: @escaping @Sendable () -> Void) {
        self.cancelTimer = cancel
    }

    /// Cancels the timer; it does nothing if the timer fired already.
    public func cancel() { cancelTimer() }
}

/// Times out a transport's idle attempts with one timer for all of them.
///
/// A timer per attempt is dear when most attempts end long before their timeout, as they do. On an
/// event loop each went into the loop's heap of scheduled work on its start and out of it on its
/// end (about 10,000 instructions a request at 64 in flight, callgrind: every removal searches a
/// heap holding an entry per request in flight). With libdispatch each timer source's arming and
/// cancelling wakes the manager thread, and its cancellation wakes a worker to finish it: about
/// three thread wake-ups a request. Here attempts only join and leave a table, and one timer, set
/// for the earliest time any of them could be due, checks them all when it fires and is set again
/// for the next. An attempt's own idle clock (its last byte, its suspension) stays with the
/// attempt, which answers ``IdleWatched/checkIdle(at:)``.
@_spi(CourierTransport)
public final class IdleWatch: Sendable {
    /// What the lock guards: the schedule, and the timer set for it.
    private struct Locked: Sendable {
        var schedule = IdleSchedule<any IdleWatched>()
        /// The timer set, and the schedule's generation it was set for.
        var timer: (generation: UInt64, cancellation: IdleTimerCancellation)?
    }

    /// Where the timer runs; the checks, and the timeouts they find, run there too.
    private let scheduler: any IdleTimerScheduler
    private let state = Protected(Locked())

    /// A watch whose timer `scheduler` sets.
    public init(scheduler: any IdleTimerScheduler) {
        self.scheduler = scheduler
    }

    deinit {
        // The timer holds the watch weakly, so it could not fire usefully: it need not wait.
        let timer = state.withLock { $0.timer.take() }
        timer?.cancellation.cancel()
    }

    /// Checks `attempt`, first at about `firstCheck` (a dispatch timer may fire up to a tenth of
    /// its wait late), until it leaves with ``stopWatching(_:)`` or a check answers `nil`. The
    /// watch holds the attempt until then; the attempt's owner keeps the watch alive meanwhile
    /// (each transport task holds its transport's), since the timer holds the watch weakly and a
    /// watch let go checks nothing more.
    public func watch(_ attempt: any IdleWatched, firstCheck: UInt64) {
        let action = state.withLock { $0.schedule.add(attempt, id: ObjectIdentifier(attempt), firstCheck: firstCheck) }
        perform(action)
    }

    /// Stops checking `attempt`; nothing happens if it is not watched.
    public func stopWatching(_ attempt: any IdleWatched) {
        // Taken out under the lock, released after it: the attempt's deinit runs no code under it.
        let removed = state.withLock { $0.schedule.remove(ObjectIdentifier(attempt)) }
        withExtendedLifetime(removed) {}
    }

    /// How many attempts are watched (for tests).
    public var count: Int { state.withLock { $0.schedule.count } }

    private func perform(_ action: IdleSchedule<any IdleWatched>.Action) {
        guard case .arm(let deadline, let generation) = action else { return }
        let cancellation = scheduler.schedule(at: deadline) { [weak self] in self?.fire(generation) }
        guard let cancellation else {
            // The scheduler refused the timer (a loop shut down); a later watch arms again.
            state.withLock { $0.schedule.disarm(generation) }
            return
        }
        // Set again meanwhile (an earlier attempt joined), or fired already: this timer is not
        // the schedule's to keep.
        let stale = state.withLock { state -> IdleTimerCancellation? in
            guard state.schedule.isArmed(for: generation) else { return cancellation }
            let replaced = state.timer?.cancellation
            state.timer = (generation, cancellation)
            return replaced
        }
        stale?.cancel()
    }

    /// The timer set for `generation` fired: checks every attempt, outside the lock (a check that
    /// times one out ends it, which may start the next attempt), then sets the next timer.
    private func fire(_ generation: UInt64) {
        let due = state.withLock { state -> [any IdleWatched]? in
            guard let due = state.schedule.fire(generation) else { return nil }
            if state.timer?.generation == generation { state.timer = nil }
            return due
        }
        guard let due else { return }
        let now = scheduler.now()
        var next: UInt64?
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
            state.withLock { $0.schedule.swept(next: next, ended: ended) }
        }
        perform(action)
    }
}

/// The attempts an ``IdleWatch`` checks and when its timer should fire, as a value: each event
/// returns what to do about the timer, and the watch does it after unlocking. Times are uptime
/// nanoseconds.
struct IdleSchedule<Watched>: Sendable where Watched: Sendable {
    /// What to do about the timer.
    enum Action: Equatable, Sendable {
        /// Leave the timer as it is.
        case none
        /// Set a timer for the deadline, standing for `generation`; any earlier timer is stale.
        case arm(UInt64, generation: UInt64)
    }

    private var watched: [ObjectIdentifier: Watched] = [:]
    /// When the current timer fires; `nil` when none is set.
    private(set) var armedAt: UInt64?
    /// Counts the timers set, so that a stale one is told apart when it fires.
    private(set) var generation: UInt64 = 0
    /// Between a timer firing and the checks it started being done.
    private(set) var isChecking = false
    /// The earliest first check of the attempts that joined while ``isChecking``.
    private var joinedWhileChecking: UInt64?

    /// An empty schedule.
    init() {}

    /// How many attempts are watched.
    var count: Int { watched.count }

    /// `attempt`, known by `id`, joins, to be checked first at `firstCheck`.
    mutating func add(_ attempt: Watched, id: ObjectIdentifier, firstCheck: UInt64) -> Action {
        watched[id] = attempt
        if isChecking {
            // The timer is set once the checks are done, early enough for this one too.
            joinedWhileChecking = joinedWhileChecking.map { min($0, firstCheck) } ?? firstCheck
            return .none
        }
        if let armedAt, armedAt <= firstCheck { return .none }
        return arm(at: firstCheck)
    }

    /// The attempt known by `id` leaves; returns it, for the caller to release outside its lock.
    @discardableResult
    mutating func remove(_ id: ObjectIdentifier) -> Watched? {
        watched.removeValue(forKey: id)
    }

    /// Whether the timer of `generation` is still the one set.
    func isArmed(for generation: UInt64) -> Bool {
        armedAt != nil && self.generation == generation
    }

    /// The timer of `generation` could not be set.
    mutating func disarm(_ generation: UInt64) {
        if isArmed(for: generation) { armedAt = nil }
    }

    /// The timer of `generation` fired: returns the attempts to check, or `nil` for a stale timer.
    mutating func fire(_ generation: UInt64) -> [Watched]? {
        guard isArmed(for: generation), !isChecking else { return nil }
        armedAt = nil
        isChecking = true
        return Array(watched.values)
    }

    /// The checks are done: `next` is the earliest check they asked for, and `ended` the attempts
    /// that need none (an attempt that ended before it joined, say).
    mutating func swept(next: UInt64?, ended: [ObjectIdentifier]) -> Action {
        for id in ended { watched.removeValue(forKey: id) }
        isChecking = false
        let joined = joinedWhileChecking
        joinedWhileChecking = nil
        let candidates = [next, joined].compactMap { $0 }
        guard !watched.isEmpty, let earliest = candidates.min() else { return .none }
        return arm(at: earliest)
    }

    private mutating func arm(at deadline: UInt64) -> Action {
        generation &+= 1
        armedAt = deadline
        return .arm(deadline, generation: generation)
    }
}

/// Sets an ``IdleWatch``'s timer with libdispatch, on a global queue.
struct DispatchIdleTimerScheduler: IdleTimerScheduler {
    func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func schedule(at deadline: UInt64, _ fire: @escaping @Sendable () -> Void) -> IdleTimerCancellation? {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        let source = TimerSource(timer: timer)
        // Cancelled once fired: libdispatch keeps a source registered until it is cancelled, and
        // the cancel lets go of this handler, which holds the source.
        timer.setEventHandler {
            source.timer.cancel()
            fire()
        }
        let wait = Double(deadline &- min(deadline, now())) / 1e9
        // The slack `asyncAfter` gives its blocks (a tenth, from 1 ms to a minute), so that
        // libdispatch can fire timers together.
        let leeway = DispatchTimeInterval.nanoseconds(Int(min(max(wait / 10, 0.001), 60) * 1e9))
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: leeway)
        timer.resume()
        return IdleTimerCancellation { source.timer.cancel() }
    }

    /// A dispatch timer source, which libdispatch lets any thread cancel: `@unchecked` only
    /// because the protocol does not say so on Linux.
    private struct TimerSource: @unchecked Sendable {
        let timer: any DispatchSourceTimer
    }
}
