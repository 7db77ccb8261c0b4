import AsyncHTTPClient
@_spi(CourierTransport) import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs requests over SwiftNIO's AsyncHTTPClient: HTTP/1.1 and HTTP/2, a connection pool, and a
/// streaming body whose reading stops while the request is suspended (real backpressure).
///
/// The transport follows no redirect: a `3xx` is reported as it is, and Courier's request
/// follows it (see `Redirect`), the same way over every transport, checking every `Location`
/// before a connection is made to it (SwiftNIO traps on a port above 65535; a server could
/// otherwise crash the process with one redirect). AsyncHTTPClient's own following is turned off
/// in every client this transport makes.
///
/// Lifetimes: ``shared`` runs on a process-wide client of Courier's own, made with
/// ``defaultConfiguration()`` and never shut down. A transport made with a configuration owns
/// its client and shuts it down in ``invalidate()``.
public final class AsyncHTTPClientTransport: Transport {
    /// The client requests run on.
    public let client: HTTPClient
    private let ownsClient: Bool
    private let isInvalidated = NIOLockedValueBox(false)
    private let steering: EventLoopSteering
    /// For requests on the trust clients, whose connections `steering` does not see.
    private let trustClientSteering: EventLoopSteering
    /// Times out the attempts, on every client of the transport, that go too long without a byte.
    let idleWatch: IdleWatch
    /// What each session's trust settings need (see ``ServerTrustClients``).
    private let trustClients: ServerTrustClients
    /// Explains refused chains, when the transport's connections go straight to the server.
    private let diagnoses: CertificateDiagnosis.Cache?

    /// A transport over a process-wide client made with ``defaultConfiguration()`` (never shut
    /// down): what `Session()` runs on where `CourierNIO` is linked.
    ///
    /// Not AsyncHTTPClient's `HTTPClient.shared`: that one follows redirects itself and retries
    /// a refused connection inside its pool until the request's timeout, where Courier reports a
    /// refused connection at once, as URLSession does, for its retry policy to decide.
    public static let shared = AsyncHTTPClientTransport(
        making: defaultConfiguration(),
        on: HTTPClient.defaultEventLoopGroup,
        ownsClient: false
    )

    /// Creates a transport that owns a new client made with `configuration` on
    /// `eventLoopGroup`.
    ///
    /// A transport that makes its client sees the connections the client's pool opens, and
    /// steers each request to the event loop where an idle connection most likely waits, so the
    /// request's events need not hop from the connection's loop to another. Over a client passed
    /// in with ``init(client:)`` it cannot.
    ///
    /// - Parameters:
    ///   - configuration: The client's configuration; ``defaultConfiguration()`` by default. Its
    ///     `redirectConfiguration` is replaced by `.disallow`: Courier follows redirects itself.
    ///     Connection initializers of your own in it still run, before the transport counts the
    ///     connection.
    ///   - eventLoopGroup: The loops the client runs on; AsyncHTTPClient's default group (one
    ///     loop per core, shared by the process) by default. The transport never shuts the group
    ///     down: shut a group of your own down after ``invalidate()``.
    public convenience init(
        configuration: HTTPClient.Configuration = AsyncHTTPClientTransport.defaultConfiguration(),
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        self.init(making: configuration, on: eventLoopGroup, ownsClient: true)
    }

    /// A transport over a client it makes with `configuration`, counting the client's
    /// connections for its ``EventLoopSteering``.
    private convenience init(
        making configuration: HTTPClient.Configuration,
        on eventLoopGroup: any EventLoopGroup,
        ownsClient: Bool
    ) {
        let steering = EventLoopSteering(
            group: eventLoopGroup,
            seesConnections: true,
            idleTimeout: configuration.connectionPool.idleTimeout
        )
        var counted = configuration
        steering.install(in: &counted)
        self.init(
            client: HTTPClient(eventLoopGroup: eventLoopGroup, configuration: counted),
            configuration: configuration,
            ownsClient: ownsClient,
            steering: steering
        )
    }

    /// Creates a transport over a client you own and shut down yourself.
    ///
    /// Make the client with `redirectConfiguration: .disallow` (as ``defaultConfiguration()``
    /// does): a client that follows redirects itself does so before Courier sees the `Location`,
    /// so neither Courier's URL check nor its redirect rules and handler apply to its redirects.
    ///
    /// A session whose trust evaluator looks at certificates (pins) runs its `https` requests
    /// on clients the transport makes on the same event loops with ``defaultConfiguration()``:
    /// AsyncHTTPClient does not show a client's configuration.
    public convenience init(client: HTTPClient) {
        self.init(
            client: client,
            configuration: Self.defaultConfiguration(),
            ownsClient: false,
            steering: EventLoopSteering(group: client.eventLoopGroup, seesConnections: false),
            knowsConfiguration: false
        )
    }

    /// - Parameter configuration: The client's configuration without the steering's initializers
    ///   (``defaultConfiguration()`` for a client passed in): trust clients start from it, and
    ///   their connections are not the client's.
    private init(
        client: HTTPClient,
        configuration: HTTPClient.Configuration,
        ownsClient: Bool,
        steering: EventLoopSteering,
        knowsConfiguration: Bool = true
    ) {
        self.client = client
        self.ownsClient = ownsClient
        self.steering = steering
        trustClientSteering = EventLoopSteering(group: client.eventLoopGroup, seesConnections: false)
        idleWatch = IdleWatch(scheduler: EventLoopIdleTimerScheduler(eventLoop: client.eventLoopGroup.next()))
        trustClients = ServerTrustClients(eventLoopGroup: client.eventLoopGroup, configuration: configuration)
        // A second connection made some other way than the client's (past its proxy or DNS
        // override) could leak where the request went, or read another server's certificate.
        let goesStraight = knowsConfiguration && configuration.proxy == nil && configuration.dnsOverride.isEmpty
        diagnoses = goesStraight ? CertificateDiagnosis.Cache(eventLoopGroup: client.eventLoopGroup) : nil
    }

    deinit {
        // A client that is never shut down asserts in debug builds; shut it down without waiting.
        if ownsClient, !isInvalidated.withLockedValue({ $0 }) {
            client.shutdown { _ in }
        }
    }

    /// AsyncHTTPClient's defaults, plus what Courier's sessions expect: `gzip`/`deflate` bodies
    /// decoded (Courier asks for them by default) with no ratio limit, redirects left to Courier,
    /// and a refused connection reported at once rather than retried inside the pool, so that it
    /// reaches Courier's own retry policy as URLSession reports it.
    ///
    /// Decompression has no limit of its own here: a request's body is bounded after
    /// decompression by `Session.Configuration.maximumResponseBodySize`, the same on both
    /// transports. (A ratio limit rejected ordinary JSON, which compresses past 100:1.)
    ///
    /// No read timeout either: each task fails after its request's `timeoutInterval` without a
    /// byte sent or received (`Session.Configuration.timeoutInterval`, 60 s by default), as on
    /// URLSession. A request whose interval is zero, negative or not finite waits as long as the
    /// server keeps the connection open; give your own client a read timeout if you want one
    /// regardless.
    public static func defaultConfiguration() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            // No read timeout of the client's own: each task times out after its request's
            // `timeoutInterval` without a byte, as on URLSession, and a second timer per request
            // would only cost time.
            timeout: .init(connect: .seconds(30)),
            decompression: .enabled(limit: .none)
        )
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        // Courier traces requests itself (`TracingEventMonitor`), under the caller's span, on both
        // transports. AsyncHTTPClient's spans would start on whatever thread sends an attempt,
        // mostly under no parent, duplicating Courier's; with no tracer bootstrapped they would
        // still cost a tenth of a request's instructions for the no-op tracer.
        configuration.tracing.tracer = nil
        return configuration
    }

    /// Makes a task; a file or stream `body` is read in chunks as the connection takes them.
    public func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        makeTask(reading: RequestHead(request), body: body, eventHandler: eventHandler)
    }

    /// Makes a task that sends the head's parts as they are: no `URLRequest` is built or read.
    public func makeTask(
        for head: RequestHead,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        makeTask(reading: head, body: body, eventHandler: eventHandler)
    }

    private func makeTask(
        reading head: RequestHead?,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        var client = self.client
        var tlsConfiguration: TLSConfiguration?
        let isInvalidated = isInvalidated.withLockedValue { $0 }
        // An invalidated transport's tasks fail at once; no client is made for them.
        var failure: CourierError?
        if let policy = head?.serverTrustPolicy, !isInvalidated {
            switch trustClients.settings(for: policy) {
            case .success(let settings):
                tlsConfiguration = settings.tlsConfiguration
                if let own = settings.client { client = own }
            case .failure(let error):
                failure = error
            }
        }
        return AsyncHTTPClientTransportTask(
            client: client,
            head: head,
            body: body,
            eventHandler: eventHandler,
            isInvalidated: isInvalidated,
            steering: client === self.client ? steering : trustClientSteering,
            idleWatch: idleWatch,
            tlsConfiguration: tlsConfiguration,
            diagnoses: tlsConfiguration == nil ? nil : diagnoses,
            failure: failure
        )
    }

    /// Shuts down the client this transport owns; tasks made afterwards fail with
    /// `URLError(.cancelled)`. A transport over a client it does not own (``shared``, or one you
    /// passed in) stays usable: other sessions may share it, and its owner shuts it down.
    public func invalidate() async {
        guard ownsClient else { return }
        let shouldShutDown = isInvalidated.withLockedValue { invalidated -> Bool in
            defer { invalidated = true }
            return !invalidated
        }
        guard shouldShutDown else { return }
        // A response can end before AsyncHTTPClient has finished writing the request's end (a
        // streamed body the server read whole); the connection goes back to the pool in a callback
        // queued on an event loop after the request completed. Shutting down before that callback
        // runs trips a precondition in AsyncHTTPClient's pool ("a connection that we don't know was
        // released"). A task submitted to every loop runs after anything already queued there.
        for _ in 0..<2 {
            for eventLoop in client.eventLoopGroup.makeIterator() {
                try? await eventLoop.submit {}.get()
            }
        }
        try? await client.shutdown()
        await trustClients.shutdown()
    }
}

@_spi(CourierTransport)
extension AsyncHTTPClientTransport: ServerTrustEnforcing {
    /// Any setting on event loops of Network.framework (Apple's `NIOTSEventLoopGroup`,
    /// AsyncHTTPClient's default group there): TLS is then Network.framework's, configured through
    /// options that take no client certificate or partial host check, and no SwiftNIO TLS handler
    /// shows the server's certificate. And revocation options Courier cannot honour: it checks
    /// with OCSP after the handshake (`RevocationCheck`), fetches no CRL, and keeps no answers
    /// across runs.
    public func cannotEnforce(_ policy: ServerTrustPolicy) -> String? {
        if !(client.eventLoopGroup is MultiThreadedEventLoopGroup) {
            return "trust settings need SwiftNIO's TLS: make the AsyncHTTPClient transport with a "
                + "MultiThreadedEventLoopGroup (on Apple platforms the default group is Network.framework's)"
        }
        let checks = policy.handshakeChecks
        guard checks.checksRevocation else { return nil }
        if !checks.validatesCertificateChain {
            return "revocation is checked on the chain the handshake validated, and this one validates none "
                + "(RevocationTrustEvaluator with performDefaultValidation and validateHost both off)"
        }
        if !trustClients.knowsRoots(for: policy) {
            return "revocation is checked on a chain rebuilt with swift-certificates, which reads the system's "
                + "roots on Linux only: give the roots (Session.Configuration.trustRoots = .only(...))"
        }
        if !trustClients.readsChains {
            return "revocation is checked on the server's chain, which a second connection to the server reads, "
                + "and the transport's connections go through a proxy"
        }
        if checks.revocationOptions.contains(.networkAccessDisabled) {
            return "revocation is checked with OCSP over the network, and no answers are kept to check it without "
                + "(RevocationTrustEvaluator.Options.networkAccessDisabled)"
        }
        if !checks.revocationOptions.contains(.ocsp) {
            return "revocation is checked with OCSP only, not with CRLs (add RevocationTrustEvaluator.Options.ocsp)"
        }
        return nil
    }
}

@_spi(CourierTransport)
extension AsyncHTTPClientTransport: DefaultTransportProviding {
    /// ``shared``: what `Session()` runs on when this module is linked.
    public static var defaultTransport: any Transport { shared }
}

extension Transport where Self == AsyncHTTPClientTransport {
    /// The AsyncHTTPClient transport over the process-wide shared client.
    public static var asyncHTTPClient: AsyncHTTPClientTransport { .shared }

    /// An AsyncHTTPClient transport owning a client made with `configuration`.
    public static func asyncHTTPClient(configuration: HTTPClient.Configuration) -> AsyncHTTPClientTransport {
        AsyncHTTPClientTransport(configuration: configuration)
    }
}
