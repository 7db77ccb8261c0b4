import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Picks the event loop each of a transport's requests prefers.
///
/// AsyncHTTPClient runs a request's events on the request's event loop. When the pooled
/// connection it leases runs on another loop of the group, every event of the request hops
/// between the two: measured, about 24,000 instructions and a thread wake-up per request that
/// hops. Left to itself (`.indifferent`), AsyncHTTPClient gives each request the loop it is
/// called on, or else the group's next, and the pool leases an idle connection on that loop if
/// it has one, else any: with as many requests in flight as connections, about one request in
/// five hops on a two-loop group. The pool makes new connections on the request's loop too, so
/// the choice also decides where connections, and their TLS and parsing, run.
///
/// Where the transport made its client, it sees every connection the pool opens and closes
/// (through AsyncHTTPClient's connection initializers) and counts them per loop, beside its own
/// requests in flight per loop. A request then prefers the loop with the most connections its
/// requests do not use: where the pool most likely has an idle one. When none has, it prefers the
/// loop with the fewest requests in flight, where the pool makes the new connection, so
/// connections and work spread over the group. Ties go to the transport's home loop, so a client
/// sending one request at a time keeps its one connection and its events on one loop.
///
/// The connections counted are the client's, to every origin: a connection AsyncHTTPClient
/// shows carries no origin. So the counts steer only while the transport's requests go to one
/// origin (scheme, host, port). After a request to another origin, for as long as the pool keeps
/// idle connections (its `idleTimeout`), requests prefer the loop with the fewest in flight:
/// another origin's idle connections on one loop must not pull every new connection there.
///
/// Over a client passed in, whose connections it cannot see, a request sent while no other of
/// the transport's is in flight prefers the home loop, and others are left `.indifferent`.
final class EventLoopSteering: Sendable {
    /// A request's place in the counts, handed back to ``end(_:)``.
    struct Ticket: Sendable {
        /// The loop preferred; `nil` leaves it to AsyncHTTPClient.
        let eventLoop: (any EventLoop)?
        var preference: HTTPClient.EventLoopPreference { eventLoop.map { .delegate(on: $0) } ?? .indifferent }
        /// Which loop the request is counted on; `nil` where it is counted on none.
        fileprivate let slot: Int?
        /// Whether the request is counted in flight at all.
        fileprivate let isCounted: Bool
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
        /// The origin of the last request begun.
        var origin: Origin?
        /// Until when connections to other origins than ``origin`` may still be open, so that
        /// the counts do not say where its own are.
        var mixedUntil: NIODeadline?
    }

    /// Where a request goes, as the pool tells connections apart: its origin, and the trust
    /// settings that give it a pool of its own (AsyncHTTPClient keys pools by TLS configuration).
    ///
    /// Read per request, so it is taken from what AsyncHTTPClient parsed already (the scheme,
    /// host and port it connects to), not parsed again: a host and scheme compared as they are
    /// stored, usually without touching memory beyond the strings' own words.
    struct Origin: Equatable, Sendable {
        let scheme: String
        let host: String
        let port: Int
        let trustPolicy: ObjectIdentifier?

        init(scheme: String, host: String, port: Int, trustPolicy: ObjectIdentifier? = nil) {
            self.scheme = scheme
            self.host = host
            self.port = port
            self.trustPolicy = trustPolicy
        }

        /// The origin `request` goes to.
        init(_ request: HTTPClient.Request, trustPolicy: ObjectIdentifier? = nil) {
            self.init(scheme: request.scheme, host: request.host, port: request.port, trustPolicy: trustPolicy)
        }
    }

    /// What an HTTP/2 connection is counted as: the streams it is taken to carry at once
    /// (servers commonly allow 100 or more).
    static let http2Capacity = 100

    private let state: NIOLockedValueBox<State>
    private let home: Int
    /// Whether connections are counted: the transport installed ``install(in:)``'s initializers.
    private let seesConnections: Bool
    /// How long the pool keeps an idle connection open.
    private let idleTimeout: TimeAmount

    /// Steering over `group`, whose next loop becomes the home. With `seesConnections`, the
    /// client's configuration carries the initializers ``install(in:)`` made, and its pool closes
    /// idle connections after `idleTimeout`.
    init(group: any EventLoopGroup, seesConnections: Bool, idleTimeout: TimeAmount = .seconds(60)) {
        let homeLoop = group.next()
        let loops = group.makeIterator().map { Loop(eventLoop: $0) }
        home = loops.firstIndex { $0.eventLoop === homeLoop } ?? 0
        state = NIOLockedValueBox(State(loops: loops))
        self.seesConnections = seesConnections
        self.idleTimeout = idleTimeout
    }

    /// Counts a request to `origin` in flight and returns the loop it should prefer. Each call
    /// is paired with one ``end(_:)``.
    func begin(to origin: @autoclosure () -> Origin) -> Ticket {
        state.withLockedValue { state in
            // A group that lists no loop: AsyncHTTPClient would refuse any loop named.
            guard !state.loops.isEmpty else { return Ticket(eventLoop: nil, slot: nil, isCounted: false) }
            defer { state.inFlight += 1 }
            let slot: Int
            if seesConnections {
                let usesCounts = Self.noteOrigin(origin(), in: &state, idleTimeout: idleTimeout)
                slot = Self.choose(in: state.loops, home: home, usingSpare: usesCounts)
            } else if state.inFlight == 0 {
                slot = home
            } else {
                return Ticket(eventLoop: nil, slot: nil, isCounted: true)
            }
            state.loops[slot].inFlight += 1
            return Ticket(eventLoop: state.loops[slot].eventLoop, slot: slot, isCounted: true)
        }
    }

    /// A request counted by ``begin(to:)`` has ended.
    func end(_ ticket: Ticket) {
        state.withLockedValue { state in
            guard ticket.isCounted else { return }
            state.inFlight -= 1
            if let slot = ticket.slot { state.loops[slot].inFlight -= 1 }
        }
    }

    /// Records `origin` as the last one; answers whether the connection counts are all its own,
    /// as far as the transport can tell: no request went to another origin within the pool's
    /// idle timeout.
    private static func noteOrigin(_ origin: Origin, in state: inout State, idleTimeout: TimeAmount) -> Bool {
        if let last = state.origin, last != origin {
            state.mixedUntil = .now() + idleTimeout
        }
        state.origin = origin
        guard let mixedUntil = state.mixedUntil else { return true }
        if mixedUntil > .now() { return false }
        state.mixedUntil = nil
        return true
    }

    /// The loop with the most spare connections (when `usingSpare`), else the one with the fewest
    /// requests; the home loop on a tie.
    private static func choose(in loops: [Loop], home: Int, usingSpare: Bool) -> Int {
        var best = home
        for index in loops.indices where index != home {
            let candidate = loops[index]
            let current = loops[best]
            if usingSpare && (current.spare > 0 || candidate.spare > 0) {
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
        guard connectionOpened(on: eventLoop, capacity: capacity) else { return }
        channel.closeFuture.whenComplete { [self] _ in connectionClosed(on: eventLoop, capacity: capacity) }
    }

    /// Counts a connection open on `eventLoop`; `false` when the loop is not the group's.
    func connectionOpened(on eventLoop: any EventLoop, capacity: Int) -> Bool {
        state.withLockedValue { state in
            guard let slot = state.loops.firstIndex(where: { $0.eventLoop === eventLoop }) else { return false }
            state.loops[slot].capacity += capacity
            return true
        }
    }

    /// A connection counted by ``connectionOpened(on:capacity:)`` has closed.
    func connectionClosed(on eventLoop: any EventLoop, capacity: Int) {
        state.withLockedValue { state in
            guard let slot = state.loops.firstIndex(where: { $0.eventLoop === eventLoop }) else { return }
            state.loops[slot].capacity -= capacity
        }
    }
}
