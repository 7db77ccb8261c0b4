extension NetworkMonitor {
    /// The monitor's lifetime as a value: who listens, and whether the platform source (the
    /// netlink reader thread, or `NWPathMonitor`) runs. Each event returns what the monitor must
    /// do; the machine does no I/O and takes no lock. ``NetworkMonitor`` holds it behind its lock
    /// and acts after releasing it.
    ///
    /// The source runs only while someone listens: the first subscriber starts it, the last one
    /// leaving stops it, and a later subscriber starts a new one. ``stop()`` and a source that
    /// fails end the monitor for good.
    ///
    /// | phase    | subscribe                 | last unsubscribe   | source started  | source failed        | stop               |
    /// |----------|---------------------------|--------------------|-----------------|----------------------|--------------------|
    /// | idle     | → starting, start source  | (cannot happen)    | stale: stop it  | stale: ignored       | → stopped          |
    /// | starting | added                     | → idle             | → running       | → stopped, finish all| → stopped          |
    /// | running  | added                     | → idle, stop source| stale: stop it  | → stopped, finish all| → stopped, stop source, finish all |
    /// | stopped  | refused                   | nothing            | stale: stop it  | ignored              | nothing            |
    ///
    /// Each start gets a new generation number; a source reporting for an older generation is
    /// stale, so a reader winding down never delivers to, or ends, its successor.
    struct StateMachine<Source, Subscriber> {
        enum Phase {
            /// Nobody listens; no source runs.
            case idle
            /// A subscriber is starting the source of this generation.
            case starting(generation: Int)
            /// The source of this generation runs.
            case running(generation: Int, source: Source)
            /// Stopped by ``stop()`` or by a failed source; subscribers are refused.
            case stopped
        }

        private(set) var phase = Phase.idle
        private var subscribers: [Int: Subscriber] = [:]
        private var lastGeneration = 0

        /// Whether a source is starting or running.
        var isRunning: Bool {
            switch phase {
            case .starting, .running: true
            case .idle, .stopped: false
            }
        }

        /// What to do after ``subscribe(id:_:)``.
        enum SubscribeAction: Equatable {
            /// Added; a source already runs or is starting.
            case added
            /// Added, and it is the first: start a source of this generation, then report with
            /// ``sourceStarted(_:generation:)`` or ``sourceFailed(generation:)``.
            case addedStartSource(generation: Int)
            /// The monitor is stopped: end the subscriber at once.
            case refused
        }

        mutating func subscribe(id: Int, _ subscriber: Subscriber) -> SubscribeAction {
            switch phase {
            case .stopped:
                return .refused
            case .starting, .running:
                subscribers[id] = subscriber
                return .added
            case .idle:
                subscribers[id] = subscriber
                lastGeneration += 1
                phase = .starting(generation: lastGeneration)
                return .addedStartSource(generation: lastGeneration)
            }
        }

        /// Removes a subscriber (unknown ids are ignored); returns the source to stop when the
        /// last one left.
        mutating func unsubscribe(id: Int) -> Source? {
            guard subscribers.removeValue(forKey: id) != nil, subscribers.isEmpty else { return nil }
            switch phase {
            case .running(_, let source):
                phase = .idle
                return source
            case .starting:
                phase = .idle
                return nil
            case .idle, .stopped:
                return nil
            }
        }

        /// Records a started source; returns `false` when it is no longer wanted (everyone left,
        /// or the monitor stopped, while it started), and the caller must stop it.
        mutating func sourceStarted(_ source: Source, generation: Int) -> Bool {
            guard case .starting(generation) = phase else { return false }
            phase = .running(generation: generation, source: source)
            return true
        }

        /// Records that the source of `generation` could not start or stopped by itself; returns
        /// the subscribers to end, or `nil` when the report is stale and changes nothing.
        mutating func sourceFailed(generation: Int) -> [Subscriber]? {
            switch phase {
            case .starting(generation), .running(generation, _):
                phase = .stopped
                defer { subscribers = [:] }
                return Array(subscribers.values)
            default:
                return nil
            }
        }

        /// Stops the monitor for good: returns the source to stop, if one runs, and the subscribers
        /// to end.
        mutating func stop() -> (source: Source?, subscribers: [Subscriber]) {
            var source: Source?
            if case .running(_, let running) = phase {
                source = running
            }
            phase = .stopped
            defer { subscribers = [:] }
            return (source, Array(subscribers.values))
        }

        /// The subscribers to deliver to for a change seen by the source of `generation`; none when
        /// that source is stale.
        func subscribers(forGeneration generation: Int) -> [Subscriber] {
            switch phase {
            case .starting(generation), .running(generation, _):
                Array(subscribers.values)
            default:
                []
            }
        }
    }
}

extension NetworkMonitor.StateMachine: Sendable where Source: Sendable, Subscriber: Sendable {}
extension NetworkMonitor.StateMachine.Phase: Sendable where Source: Sendable {}
