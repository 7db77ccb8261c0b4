import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import CourierNIO

/// The steering's choices, with connections counted by hand: no socket.
@Suite struct EventLoopSteeringTests {
    private static let apiOrigin = EventLoopSteering.Origin(scheme: "https", host: "api.example", port: 443)
    /// Another origin: the same server under trust settings of its own, which get a pool of their own.
    private static let otherOrigin = EventLoopSteering.Origin(
        scheme: "https",
        host: "api.example",
        port: 443,
        trustPolicy: ObjectIdentifier(EventLoopSteeringTests.self)
    )

    /// The loop a ticket prefers, or `nil` for `.indifferent`.
    private static func loop(of ticket: EventLoopSteering.Ticket) -> ObjectIdentifier? {
        ticket.eventLoop.map { ObjectIdentifier($0 as AnyObject) }
    }

    @Test func aRequestGoesWhereAConnectionIsSpareThenWhereFewestAreInFlight() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let steering = EventLoopSteering(group: group, seesConnections: true)
        let loops = group.makeIterator().map { $0 }
        let home = try #require(Self.loop(of: steering.begin(to: Self.apiOrigin)))
        let other = try #require(loops.first { ObjectIdentifier($0 as AnyObject) != home })
        // The first request took home with no connection anywhere: ties go home. A connection
        // spare on the other loop draws the next one there.
        #expect(steering.connectionOpened(on: other, capacity: 1))
        let second = steering.begin(to: Self.apiOrigin)
        #expect(Self.loop(of: second) == ObjectIdentifier(other as AnyObject))
        // No spare anywhere: the loop with the fewest in flight (a tie: home).
        let third = steering.begin(to: Self.apiOrigin)
        #expect(Self.loop(of: third) == home)
        steering.end(second)
        // `second` ended: its connection is spare again.
        #expect(Self.loop(of: steering.begin(to: Self.apiOrigin)) == ObjectIdentifier(other as AnyObject))
        try await group.shutdownGracefully()
    }

    /// Connections carry no origin, so after a request to another origin the counts are not
    /// trusted (another origin's idle connections must not pull every request to their loop).
    @Test func anotherOriginsConnectionsDoNotPullRequests() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let steering = EventLoopSteering(group: group, seesConnections: true, idleTimeout: .seconds(3600))
        let home = try #require(Self.loop(of: steering.begin(to: Self.apiOrigin)))
        let other = try #require(group.makeIterator().first { ObjectIdentifier($0 as AnyObject) != home })
        #expect(steering.connectionOpened(on: other, capacity: EventLoopSteering.http2Capacity))
        #expect(Self.loop(of: steering.begin(to: Self.apiOrigin)) == ObjectIdentifier(other as AnyObject))
        // Home and the other loop have one request each; the other loop's 99 spare streams
        // would win, but they may be another origin's now: fewest in flight, a tie, home.
        #expect(Self.loop(of: steering.begin(to: Self.otherOrigin)) == home)
        #expect(Self.loop(of: steering.begin(to: Self.apiOrigin)) == ObjectIdentifier(other as AnyObject))
        try await group.shutdownGracefully()
    }

    /// Over a client passed in, a request alone prefers home and one beside others is left to
    /// AsyncHTTPClient; every ticket ends once.
    @Test func withoutConnectionsOnlyARequestAloneIsSteered() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let steering = EventLoopSteering(group: group, seesConnections: false)
        let alone = steering.begin(to: Self.apiOrigin)
        #expect(Self.loop(of: alone) != nil)
        let beside = steering.begin(to: Self.apiOrigin)
        #expect(Self.loop(of: beside) == nil)
        steering.end(beside)
        steering.end(alone)
        #expect(Self.loop(of: steering.begin(to: Self.apiOrigin)) == Self.loop(of: alone))
        try await group.shutdownGracefully()
    }

    /// A request's origin is where AsyncHTTPClient connects: its path, query and a default port
    /// written out do not change it; another port, scheme or host does.
    @Test func anOriginIsTheSchemeHostAndPortARequestConnectsTo() throws {
        func origin(_ url: String) throws -> EventLoopSteering.Origin {
            EventLoopSteering.Origin(try HTTPClient.Request(url: url))
        }
        let api = try origin("http://api.example/users?page=2")
        #expect(try origin("http://api.example:80/") == api)
        #expect(try origin("http://api.example:8080/users") != api)
        #expect(try origin("https://api.example/users") != api)
        #expect(try origin("http://other.example/users") != api)
        #expect(
            EventLoopSteering.Origin(
                try HTTPClient.Request(url: "http://api.example/"),
                trustPolicy: ObjectIdentifier(Self.self)
            ) != api
        )
    }
}
