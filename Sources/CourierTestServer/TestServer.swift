import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An embedded HTTP/1.1 (and, over TLS, HTTP/2) server with httpbin's routes and Courier's fault-injection routes, for tests,
/// demos and your own test suites.
///
/// Start one per test (each binds its own free port on 127.0.0.1, so many run at once), point a
/// client at ``baseURL``, and shut it down when done; ``withRunningServer(configuration:_:)`` does both:
///
/// ```swift
/// try await TestServer.withRunningServer { server in
///     let url = server.url("/get?q=swift")
///     // ... make requests to url ...
/// }
/// ```
///
/// The routes answer as httpbin does (see the README's route table), so a test written against this
/// server also runs against real httpbin. Courier's own routes under `/fault/` simulate failures
/// httpbin cannot: dropped and reset connections, lying `Content-Length`, a server that never answers,
/// `503` with `Retry-After`, slow or huge headers. `/upload` and `/upload/multipart` stream a body of any
/// size and answer its length and SHA-256 (for each part of a `multipart/form-data` body).
///
/// With ``Configuration/tls`` set, the server speaks HTTPS and negotiates `h2` or `http/1.1` by
/// ALPN, so a client's TLS and HTTP/2 paths can be tested on loopback too.
///
/// Built on SwiftNIO directly rather than Hummingbird: fault routes must write bytes no framework
/// would let through (half a head, a wrong length, a reset mid-body), and SwiftNIO is already a
/// dependency of `CourierNIO`, so the server costs the build nothing more.
public final class TestServer: Sendable {
    /// How a ``TestServer`` listens and what it tolerates.
    public struct Configuration: Sendable {
        /// The address to bind; loopback by default.
        public var host = "127.0.0.1"
        /// The port to bind; `0` picks a free one.
        public var port = 0
        /// The largest request body a route reads whole; larger bodies get `413` and the connection
        /// closes. The `/upload` and `/upload/multipart` sinks stream and have no limit.
        public var maximumRequestBodySize = 64 * 1024 * 1024
        /// The longest any route waits or hangs before giving up, so no test can wedge the server.
        public var maximumWait: TimeAmount = .seconds(300)
        /// When set, the server speaks TLS (``baseURL`` is `https://`) and serves HTTP/2 or HTTP/1.1,
        /// whichever ALPN settles on; `nil` (the default) serves plain HTTP/1.1.
        ///
        /// ``TestServer/TLS/selfSigned`` is ready to use with a client that trusts ``TestCertificate``.
        public var tls: TLS?
        /// When set, `POST /ocsp` answers OCSP requests (`application/ocsp-request`) for its
        /// authority's certificates; otherwise that route answers `404`.
        public var ocspResponder: TestCertificateAuthority.OCSPResponder?

        /// The default configuration: 127.0.0.1, a free port.
        public init() {}

        /// The default configuration, changed by `configure`.
        public init(_ configure: (inout Configuration) -> Void) {
            configure(&self)
        }
    }

    /// The configuration the server runs with.
    public let configuration: Configuration
    /// The port the server listens on.
    public let port: Int
    /// The server's root URL, e.g. `http://127.0.0.1:49152`, or `https://…` when serving TLS.
    public let baseURL: URL

    private let serverChannel: any Channel
    private let state: ServerState

    private init(configuration: Configuration, serverChannel: any Channel, state: ServerState, port: Int) {
        self.configuration = configuration
        self.serverChannel = serverChannel
        self.state = state
        self.port = port
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        // A host and port always form a valid URL; the fallback only satisfies the type checker.
        let scheme = configuration.tls == nil ? "http" : "https"
        self.baseURL = URL(string: "\(scheme)://\(host):\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// Starts a server and returns once it accepts connections.
    ///
    /// - Parameter configuration: Where to listen, the server's limits, and whether it speaks TLS.
    /// - Throws: The bind error when the address or port is unavailable, or NIOSSL's error when the
    ///   TLS certificate chain or key cannot be read.
    public static func start(configuration: Configuration = Configuration()) async throws -> TestServer {
        let state = ServerState(configuration: configuration)
        let router = Routes.router
        let sslContext = try configuration.tls?.makeContext()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                state.register(channel)
                guard let sslContext else {
                    return channel.eventLoop.makeCompletedFuture {
                        try configureHTTP1(channel, router: router, state: state, scheme: "http")
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    // Nothing moving either way for the idle time closes the connection, from the
                    // handshake on, whether it then speaks HTTP/1.1 or HTTP/2.
                    let idle = idleTimeout(state.configuration)
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: idle))
                    try channel.pipeline.syncOperations.addHandler(IdleConnectionCloser())
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }
                .flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try configureHTTP2(channel, router: router, state: state)
                            }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try configureHTTP1(channel, router: router, state: state, scheme: "https")
                            }
                        }
                    )
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestServerError.noLocalAddress
        }
        return TestServer(configuration: configuration, serverChannel: channel, state: state, port: port)
    }

    /// How long a connection may stay idle: the longest wait, but never less than 10 s, since a
    /// client on a busy machine may take a moment to send its first request.
    private static func idleTimeout(_ configuration: Configuration) -> TimeAmount {
        max(configuration.maximumWait, .seconds(10))
    }

    /// Adds the HTTP/1.1 handlers to a connection, plain or after TLS.
    private static func configureHTTP1(
        _ channel: any Channel,
        router: Router,
        state: ServerState,
        scheme: String
    ) throws {
        let idle = idleTimeout(state.configuration)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(IdleStateHandler(readTimeout: idle, writeTimeout: idle))
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        try pipeline.addHandler(ConnectionHandler(router: router, state: state, scheme: scheme))
    }

    /// Adds HTTP/2 to a TLS connection that negotiated `h2`: each stream gets its own handler,
    /// behind NIO's codec from HTTP/2 frames to HTTP/1-style request and response parts.
    private static func configureHTTP2(_ channel: any Channel, router: Router, state: ServerState) throws {
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration(),
            streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try stream.pipeline.syncOperations.addHandler(HTTP2StreamHandler(router: router, state: state))
            }
        }
    }

    /// Starts a server, runs `body` with it, and shuts it down whether `body` returns or throws.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and the server's limits.
    ///   - body: The work to do while the server runs.
    /// - Returns: What `body` returns.
    public static func withRunningServer<Result>(
        configuration: Configuration = Configuration(),
        _ body: (TestServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(configuration: configuration)
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// The absolute URL of `pathAndQuery` on this server, e.g. `url("/status/503")`.
    public func url(_ pathAndQuery: String) -> URL {
        let path = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        return URL(string: baseURL.absoluteString + path) ?? baseURL
    }

    /// How many requests a keyed fault route (such as `/fault/retry-after/:key`) has counted for `key`.
    ///
    /// Tests use it to check how many attempts a client really made.
    public func attempts(forKey key: String) -> Int {
        state.attempts(forKey: key)
    }

    /// Returns once the server has received `count` requests in all (counting request heads), so a
    /// test can act at the moment a request is in the server's hands rather than sleeping.
    ///
    /// - Parameters:
    ///   - count: The total number of requests to wait for, counted from the server's start.
    ///   - timeout: How long to wait.
    /// - Throws: ``TestServerError/timedOut`` if fewer requests arrive in time, or `CancellationError`.
    public func waitForRequests(_ count: Int, timeout: Duration = .seconds(30)) async throws {
        let received = try await withThrowingTaskGroup(of: Bool?.self) { group in
            group.addTask { await self.state.waitForRequests(count) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        switch received {
        case true?: return
        case false?: throw CancellationError()
        case nil: throw TestServerError.timedOut
        }
    }

    /// Stops accepting connections, closes the open ones (ending any response in flight), and
    /// returns once everything is closed. Calling it again does nothing.
    public func shutdown() async throws {
        let connections = state.beginShutdown()
        try? await serverChannel.close()
        for connection in connections {
            try? await connection.close()
        }
    }
}

/// Errors the test server throws when it cannot start.
public struct TestServerError: Error, CustomStringConvertible, Sendable, Equatable {
    private let message: String

    /// A wait on the server did not end in time.
    public static let timedOut = TestServerError(message: "timed out waiting for the server")

    /// The bound socket reported no local address.
    public static let noLocalAddress = TestServerError(message: "the server socket has no local address")

    /// A readable explanation.
    public var description: String { message }
}
