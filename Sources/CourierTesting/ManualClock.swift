import Foundation

/// A clock that moves only when told to: give it to a ``Courier/Session`` (its `clock:`
/// parameter) and a test runs retry delays and request deadlines in no time, deterministically.
///
/// ```swift
/// let clock = ManualClock()
/// let session = Session(configuration: configuration, transport: stub, clock: clock)
/// let response = Task { await session.request(url).serializingData().response }
/// try await clock.waitForSleepers(count: 1)   // the request waits out its retry delay
/// clock.advance(by: .seconds(30))             // and its next attempt starts now
/// ```
///
/// Every task sleeping on the clock counts: with `requestDeadline` set, a request's deadline
/// sleeps on it too, from its first attempt, so wait for one sleeper more.
///
/// An advance wakes the sleepers whose time has come in the order of their deadlines, but the
/// woken tasks then run concurrently: wait for what they do, not for their order. A cancelled
/// sleeper throws `CancellationError` at once. Time starts at zero and never goes back.
public final class ManualClock: Clock, Sendable {
    /// A point in a ``ManualClock``'s time: how far it is from the clock's start.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// The time since the clock started.
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Orders instants by their offsets.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The offset, such as `30.0 seconds`.
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: UnsafeContinuation<Void, any Error>
    }

    private struct SleeperWait {
        let count: Int
        let continuation: UnsafeContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UUID: Sleeper] = [:]
        var waits: [UUID: SleeperWait] = [:]

        /// Takes the waits that `sleepers` now satisfies.
        mutating func takeSatisfiedWaits() -> [UnsafeContinuation<Void, any Error>] {
            let satisfied = waits.filter { $0.value.count <= sleepers.count }
            for id in satisfied.keys { waits.removeValue(forKey: id) }
            return satisfied.values.map(\.continuation)
        }
    }

    private let state = Locked(State())

    /// A clock at time zero, with nobody asleep.
    public init() {}

    /// The current time: zero plus every advance so far.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: the clock moves only by ``advance(by:)``.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on the clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the clock has been advanced to `deadline` (at once if it has already), or
    /// throws `CancellationError` if the task is cancelled first. `tolerance` is ignored.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                enum Outcome {
                    case slept, cancelled
                    case asleep([UnsafeContinuation<Void, any Error>])
                }
                // The task's cancelled flag is set before its handler runs: a cancel that came
                // before this point shows here, and one that comes after finds the sleeper.
                let outcome = state.withLock { state -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    if deadline <= state.now { return .slept }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .asleep(state.takeSatisfiedWaits())
                }
                switch outcome {
                case .slept: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .asleep(let waits): waits.forEach { $0.resume() }
                }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock `duration` forward and wakes, in deadline order, every sleeper whose
    /// deadline it reaches. A negative duration does nothing: time never goes back.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            guard duration > .zero else { return [] }
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        woken.forEach { $0.continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on the clock, or throws `CancellationError` if
    /// the waiting task is cancelled first. Advance the clock after it, so that the sleep you mean
    /// to end has begun (a sleeper counts every task asleep on the clock, such as a request's
    /// deadline as well as its retry delay).
    public func waitForSleepers(count: Int) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                enum Outcome { case ready, cancelled, waiting }
                let outcome = state.withLock { state -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    if state.sleepers.count >= count { return .ready }
                    state.waits[id] = SleeperWait(count: count, continuation: continuation)
                    return .waiting
                }
                switch outcome {
                case .ready: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            state.withLock { $0.waits.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}
