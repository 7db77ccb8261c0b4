import Foundation

/// The clock a session times retry delays and request deadlines by, as durations since the
/// session started it: ``ContinuousClock`` unless the session was given another (a test's
/// manual clock drives retries and deadlines without waiting).
///
/// It hides the clock's own instant type, so that ``RetrySchedule`` and ``Request`` work in plain
/// durations and nothing is generic over the clock.
struct SessionClock: Sendable {
    /// The time since the clock was wrapped.
    let now: @Sendable () -> Duration
    /// Sleeps until that time since the clock was wrapped; throws if the task is cancelled first.
    let sleep: @Sendable (_ until: Duration) async throws -> Void

    /// Wraps `clock`; its current time becomes zero.
    init(_ clock: any Clock<Duration>) {
        self = Self.wrapping(clock)
    }

    private init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    // Generic so that the existential is opened once, here: the closures then work with the
    // clock's own instants.
    private static func wrapping<C: Clock<Duration>>(_ clock: C) -> SessionClock {
        let start = clock.now
        return SessionClock(
            now: { start.duration(to: clock.now) },
            sleep: { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) }
        )
    }
}
