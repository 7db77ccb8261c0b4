import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore

/// Picks the event loop each of a transport's requests prefers.
///
/// AsyncHTTPClient runs a request's events on the request's event loop. When the pooled
/// connection it leases runs on another loop of the group, every event of the request hops
/// between the two: measured, about 24,000 instructions and a thread wake-up per request that
/// hops, which on a two-loop group was half the requests of a client sending one at a time. The
/// pool prefers an idle connection on the request's loop and makes new connections there.
///
/// So a request sent while none of the transport's other requests is in flight prefers one fixed
/// loop, the transport's home: a client that sends one request at a time makes its connections
/// there, finds them idle there, and never hops. A request sent while others are in flight leaves
/// the loop to AsyncHTTPClient, which spreads requests and their connections over the group, so
/// concurrent work still uses every loop.
final class EventLoopSteering: Sendable {
    private let home: any EventLoop
    /// Requests begun and not yet ended.
    private let inFlight = NIOLockedValueBox(0)

    /// Steering over `group`, whose next loop becomes the home.
    init(group: any EventLoopGroup) {
        home = group.next()
    }

    /// Counts a request in flight and returns the loop it should prefer. Each call is paired
    /// with one ``end()``.
    func begin() -> HTTPClient.EventLoopPreference {
        let othersInFlight = inFlight.withLockedValue { count -> Bool in
            defer { count += 1 }
            return count > 0
        }
        return othersInFlight ? .indifferent : .delegate(on: home)
    }

    /// A request counted by ``begin()`` has ended.
    func end() {
        inFlight.withLockedValue { $0 -= 1 }
    }
}
