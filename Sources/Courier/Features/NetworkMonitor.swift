import Foundation

/// Reports changes of the machine's network path and, as a ``RetryTrigger``, releases requests
/// waiting to retry as soon as connectivity may have returned, instead of at the end of their
/// backoff.
///
/// Give one to a session as a retry trigger, or iterate ``events()`` to watch the network
/// yourself:
///
/// ```swift
/// let monitor = NetworkMonitor()
/// for await event in monitor.events() {
///     print(event)   // linkUp(eth0), addressAdded(eth0), routeAdded, …
/// }
/// ```
///
/// On Linux it listens to rtnetlink (link, address and route changes of the process's network
/// namespace, on an `AF_NETLINK` socket read by a thread of its own); on Apple platforms it wraps
/// `NWPathMonitor`. As a trigger it fires ``RetryTriggerEvent/all`` when an event has
/// ``NetworkPathEvent/mayRestoreConnectivity``: a link came up, a new address or a default route was added,
/// or the path became satisfied. Linux sends several such events when one interface comes up;
/// the trigger fires at most once for the events the kernel reports together.
///
/// ## Lifetime
///
/// The monitor watches only while someone listens: the first ``observe(_:)`` or ``events()``
/// starts it, and it stops when the last observation is cancelled and the last stream ends,
/// ready to start again. A listener keeps the monitor alive, so
/// `for await event in NetworkMonitor().events()` works. ``stop()`` ends it for good. Should the
/// system refuse it (no netlink socket in a sandbox), it stops the same way: streams finish and
/// the trigger never fires, which leaves retries on their normal schedule.
///
/// Handlers passed to ``observe(_:)`` run on the monitor's thread (its queue on Apple platforms);
/// keep them short. A handler may run once more if its observation is cancelled while an event
/// is being delivered.
public final class NetworkMonitor: RetryTrigger, Sendable {
    private enum Subscriber {
        case handler(@Sendable (RetryTriggerEvent) -> Void)
        case stream(AsyncStream<NetworkPathEvent>.Continuation)
    }

    #if os(Linux)
    typealias Source = NetlinkReader
    #elseif canImport(Network)
    typealias Source = PathMonitor
    #else
    typealias Source = Never
    #endif

    /// Everything mutable, behind one lock.
    private struct State {
        var machine = StateMachine<Source, Subscriber>()
        var nextID = 0
        /// Why the source failed, once it has.
        var failure: String?
    }

    /// The most events a stream holds for a consumer that falls behind; the oldest are dropped
    /// first, so a slow consumer still sees the latest state.
    private static let streamBufferSize = 256

    private let state = Protected(State())
    /// The network namespace watched, when not the process's own (Linux, tests).
    private let namespacePath: String?

    /// One monitor of the process's network for everything that only observes it: the default
    /// trigger of every ``OfflineRetrier``, so that many retriers share one netlink socket (or
    /// one path monitor) and its thread. Do not ``stop()`` it: that would end it for all of them.
    public static let shared = NetworkMonitor()

    /// A monitor of the process's network: its namespace on Linux, the system's path on Apple
    /// platforms. It starts when first observed or iterated.
    public init() {
        namespacePath = nil
    }

    #if os(Linux)
    /// A monitor of another network namespace, such as `/var/run/netns/NAME` made by
    /// `ip netns add NAME`. Entering it needs `CAP_SYS_ADMIN`; without it the monitor fails on start
    /// (see ``failure``).
    init(networkNamespacePath: String) {
        namespacePath = networkNamespacePath
    }
    #endif

    /// Whether the monitor is watching now: someone listens, and it was neither stopped nor
    /// refused by the system.
    public var isRunning: Bool {
        state.withLock { $0.machine.isRunning }
    }

    /// Why the system refused the monitor, or `nil` if it has not.
    var failure: String? {
        state.withLock { $0.failure }
    }

    /// A new stream of the changes seen from now on; each call returns its own stream.
    ///
    /// The stream finishes when the monitor is stopped or fails. Ending the iteration (or
    /// cancelling its task) unsubscribes it. Once the first stream or observation has been
    /// made, no change made afterwards is missed. A consumer that falls far behind loses the
    /// oldest events first.
    public func events() -> AsyncStream<NetworkPathEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: NetworkPathEvent.self,
            bufferingPolicy: .bufferingNewest(Self.streamBufferSize)
        )
        let id = nextID()
        // The stream keeps the monitor alive until it ends.
        continuation.onTermination = { _ in self.unsubscribe(id: id) }
        if !subscribe(id: id, .stream(continuation)) {
            continuation.finish()
        }
        return stream
    }

    /// Calls `handler` with ``RetryTriggerEvent/all`` whenever connectivity may have returned,
    /// until the returned observation is cancelled.
    public func observe(_ handler: @escaping @Sendable (RetryTriggerEvent) -> Void) -> RetryTriggerObservation {
        let id = nextID()
        guard subscribe(id: id, .handler(handler)) else {
            return RetryTriggerObservation {}
        }
        // The observation keeps the monitor alive until it is cancelled.
        return RetryTriggerObservation { self.unsubscribe(id: id) }
    }

    /// Stops the monitor for good: its thread ends, every stream finishes, and observations no
    /// longer fire. Later calls to ``events()`` return finished streams.
    public func stop() {
        let (source, subscribers) = state.withLock { $0.machine.stop() }
        if let source {
            Self.stop(source)
        }
        Self.end(subscribers)
    }

    private func nextID() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Adds a subscriber, starting the source if it is the first; `false` when the monitor is
    /// stopped and the subscriber was not added.
    private func subscribe(id: Int, _ subscriber: Subscriber) -> Bool {
        switch state.withLock({ $0.machine.subscribe(id: id, subscriber) }) {
        case .refused:
            return false
        case .added:
            return true
        case .addedStartSource(let generation):
            do {
                let source = try makeSource(generation: generation)
                if !state.withLock({ $0.machine.sourceStarted(source, generation: generation) }) {
                    Self.stop(source)
                }
            } catch {
                sourceFailed(generation: generation, error)
            }
            return true
        }
    }

    private func unsubscribe(id: Int) {
        if let source = state.withLock({ $0.machine.unsubscribe(id: id) }) {
            Self.stop(source)
        }
    }

    private func sourceFailed(generation: Int, _ error: any Error) {
        let subscribers = state.withLock { state -> [Subscriber] in
            guard let subscribers = state.machine.sourceFailed(generation: generation) else { return [] }
            state.failure = "\(error)"
            return subscribers
        }
        Self.end(subscribers)
    }

    /// Hands a change seen by the source of `generation` to every subscriber: the events to the
    /// streams, one ``RetryTriggerEvent/all`` to the handlers if connectivity may have returned.
    private func deliver(_ events: [NetworkPathEvent], mayRestoreConnectivity: Bool, generation: Int) {
        let subscribers = state.withLock { $0.machine.subscribers(forGeneration: generation) }
        for subscriber in subscribers {
            switch subscriber {
            case .stream(let continuation):
                for event in events {
                    continuation.yield(event)
                }
            case .handler(let handler):
                if mayRestoreConnectivity {
                    handler(.all)
                }
            }
        }
    }

    private static func end(_ subscribers: [Subscriber]) {
        for case .stream(let continuation) in subscribers {
            continuation.finish()
        }
    }

    // The source's callbacks hold the monitor strongly: while a source runs, someone listens, and
    // the monitor must live to tell them.
    private func makeSource(generation: Int) throws -> Source {
        let deliver: @Sendable ([NetworkPathEvent], Bool) -> Void = { events, mayRestoreConnectivity in
            self.deliver(events, mayRestoreConnectivity: mayRestoreConnectivity, generation: generation)
        }
        #if os(Linux)
        return try NetlinkReader.start(
            namespacePath: namespacePath,
            deliver: deliver,
            failed: { failure in self.sourceFailed(generation: generation, failure) }
        )
        #elseif canImport(Network)
        return PathMonitor(deliver: deliver)
        #else
        _ = deliver
        throw UnsupportedPlatform()
        #endif
    }

    private static func stop(_ source: Source) {
        #if os(Linux) || canImport(Network)
        source.stop()
        #else
        switch source {}
        #endif
    }
}

#if !os(Linux) && !canImport(Network)
/// Thrown on start where Courier knows no way to watch the network.
private struct UnsupportedPlatform: Error, CustomStringConvertible {
    var description: String { "NetworkMonitor is not supported on this platform" }
}
#endif
