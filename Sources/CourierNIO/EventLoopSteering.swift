import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore

/// Picks the event loop each of a transport's requests prefers.
///
/// AsyncHTTPClient runs a request's events on the request's event loop. When the pooled
/// connection it leases runs on another loop of the group, every event of the request hops
/// between the two: measured, about 24,000 instructions and a thread wake-up per request that
/// hops. Left to itself (`.indifferent`), AsyncHTTPClient gives each request the group's next
/// loop and the pool then leases whichever connection is idle, so on a two-loop group about half
/// the requests hop. The pool prefers an idle connection on the request's loop and makes new
/// connections there, so a good guess of where an idle connection is removes the hop.
///
/// Where the transport made its client, it sees every connection the pool opens and closes
/// (through AsyncHTTPClient's connection initializers) and counts them per loop, beside its own
/// requests in flight per loop. A request then prefers the loop with the most connections its
/// requests do not use: where the pool most likely has an idle one. When none has, it prefers the
/// loop with the fewest requests in flight, where the pool makes the new connection, so
/// connections and work spread over the group. Ties go to the transport's home loop, so a client
/// sending one request at a time keeps its one connection and its events on one loop.
///
/// It is a guess: the counts cover every host the client talks to and not the pool's own order,
/// and a connection is released to the pool a moment after its request ends. A wrong guess costs
/// the hop that `.indifferent` would have cost anyway.
///
/// Over a client passed in, whose connections it cannot see, a request sent while no other of
/// the transport's is in flight prefers the home loop, and others are left `.indifferent`.
final class EventLoopSteering: Sendable {
    /// A request's place in the counts, handed back to ``end(_:)``.
    struct Ticket: Sendable {
        let preference: HTTPClient.EventLoopPreference
        /// Which loop the request is counted on; `nil` where it is counted on none.
        fileprivate let slot: Int?
    }

    private struct Loop {
        let eventLoop: any EventLoop
        /// Open connections on the loop, each weighted by the requests it can carry at once.
        var capacity = 0
        /// The transport's requests begun on this loop and not yet ended.
        var inFlight = 0
        /// Connections the pool likely holds idle here.
        var spare: Int { capacity - inFlight }
    }

    private struct State {
        var loops: [Loop]
        /// Requests begun and not yet ended, on any loop or none.
        var inFlight = 0
    }

    /// What an HTTP/2 connection is counted as: the streams it is taken to carry at once
    /// (servers commonly allow 100 or more).
    static let http2Capacity = 100

    private let state: NIOLockedValueBox<State>
    private let home: Int
    /// Whether connections are counted: the transport installed ``install(in:)``'s initializers.
    private let seesConnections: Bool

    /// Steering over `group`, whose next loop becomes the home. With `seesConnections`, the
    /// client's configuration carries the initializers ``install(in:)`` made.
    init(group: any EventLoopGroup, seesConnections: Bool) {
        let homeLoop = group.next()
        var loops = group.makeIterator().map { Loop(eventLoop: $0) }
        if loops.isEmpty { loops = [Loop(eventLoop: homeLoop)] }
        home = loops.firstIndex { $0.eventLoop === homeLoop } ?? 0
        state = NIOLockedValueBox(State(loops: loops))
        self.seesConnections = seesConnections
    }

    /// Counts a request in flight and returns the loop it should prefer. Each call is paired
    /// with one ``end(_:)``.
    func begin() -> Ticket {
        state.withLockedValue { state in
            defer { state.inFlight += 1 }
            let slot: Int
            if seesConnections {
                slot = Self.choose(in: state.loops, home: home)
            } else if state.inFlight == 0 {
                slot = home
            } else {
                return Ticket(preference: .indifferent, slot: nil)
            }
            state.loops[slot].inFlight += 1
            return Ticket(preference: .delegate(on: state.loops[slot].eventLoop), slot: slot)
        }
    }

    /// A request counted by ``begin()`` has ended.
    func end(_ ticket: Ticket) {
        state.withLockedValue { state in
            state.inFlight -= 1
            if let slot = ticket.slot { state.loops[slot].inFlight -= 1 }
        }
    }

    /// The loop with the most spare connections, else the one with the fewest requests; the home
    /// loop on a tie.
    private static func choose(in loops: [Loop], home: Int) -> Int {
        var best = home
        for index in loops.indices where index != home {
            let candidate = loops[index]
            let current = loops[best]
            if current.spare > 0 || candidate.spare > 0 {
                if candidate.spare > current.spare { best = index }
            } else if candidate.inFlight < current.inFlight {
                best = index
            }
        }
        return best
    }

    /// Sets `configuration`'s connection initializers to count each connection the client opens
    /// until it closes, after running the ones the configuration already had. A connection one of
    /// those refuses is not counted.
    func install(in configuration: inout HTTPClient.Configuration) {
        let http1 = configuration.http1_1ConnectionDebugInitializer
        let http2 = configuration.http2ConnectionDebugInitializer
        configuration.http1_1ConnectionDebugInitializer = { [self] channel in
            let ready = http1?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            return ready.map { self.count(channel, capacity: 1) }
        }
        configuration.http2ConnectionDebugInitializer = { [self] channel in
            let ready = http2?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            return ready.map { self.count(channel, capacity: Self.http2Capacity) }
        }
    }

    private func count(_ channel: any Channel, capacity: Int) {
        let eventLoop = channel.eventLoop
        let counted = state.withLockedValue { state -> Bool in
            guard let slot = state.loops.firstIndex(where: { $0.eventLoop === eventLoop }) else { return false }
            state.loops[slot].capacity += capacity
            return true
        }
        guard counted else { return }
        channel.closeFuture.whenComplete { [self] _ in
            state.withLockedValue { state in
                guard let slot = state.loops.firstIndex(where: { $0.eventLoop === eventLoop }) else { return }
                state.loops[slot].capacity -= capacity
            }
        }
    }
}
