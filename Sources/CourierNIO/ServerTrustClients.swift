import AsyncHTTPClient
@_spi(CourierTransport) import Courier
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// How the AsyncHTTPClient transport applies each ``ServerTrustPolicy``: a `TLSConfiguration`
/// per policy (so AsyncHTTPClient pools only connections that trust alike), and, for a policy
/// whose evaluator looks at the certificates, a client of its own whose connections are checked
/// as soon as their handshake is done, before the pool hands them to a request.
///
/// AsyncHTTPClient takes no verification callback (its issue #285): a client's connection
/// initializers are the one place where a connection's TLS handler can be read before the pool
/// hands the connection out, and they are per client, so a policy that evaluates gets a client.
/// Those clients share the transport's event loops, and are shut down when their policy goes
/// away (with its session), when the transport that owns them is invalidated, or with it.
final class ServerTrustClients: Sendable {
    /// What the transport applies for one policy.
    struct Settings: Sendable {
        let tlsConfiguration: TLSConfiguration
        /// The client to run on, when the policy's evaluator looks at the certificates.
        let client: HTTPClient?
    }

    private struct Entry {
        weak var policy: ServerTrustPolicy?
        let settings: Result<Settings, CourierError>

        var client: HTTPClient? { (try? settings.get())?.client }
    }

    private let eventLoopGroup: any EventLoopGroup
    /// The transport's client configuration: the base of every policy's.
    private let configuration: HTTPClient.Configuration
    private let entries = NIOLockedValueBox([ObjectIdentifier: Entry]())
    /// What servers presented to probes, for evaluators that look past the server's own
    /// certificate; `nil` when the policies' connections go through a proxy, where the address a
    /// connection reached is the proxy's.
    private let probes: ServerCertificateProbe.Cache?
    /// The client OCSP queries go out on, made for the first policy that checks revocation: one
    /// without the policies' connection checks (its connections are the responders', in plain
    /// HTTP mostly), through the transport's proxy if it has one.
    private let ocspClient = NIOLockedValueBox<HTTPClient?>(nil)
    /// Set by ``shutdown()``: no client is made afterwards. Read and written under `entries`' lock.
    private let isShutDown = NIOLockedValueBox(false)

    init(eventLoopGroup: any EventLoopGroup, configuration: HTTPClient.Configuration) {
        self.eventLoopGroup = eventLoopGroup
        self.configuration = configuration
        probes = configuration.proxy == nil ? ServerCertificateProbe.Cache() : nil
    }

    deinit {
        // A transport that goes away without `invalidate()`: AsyncHTTPClient asserts when a
        // client is released without being shut down.
        let clients = entries.withLockedValue { entries in entries.values.compactMap(\.client) }
        for client in clients + [ocspClient.withLockedValue { $0 }].compactMap({ $0 }) { Self.shutDownSoon(client) }
    }

    /// The settings for `policy`, made on first use; a certificate or key the TLS stack cannot
    /// read is the error.
    func settings(for policy: ServerTrustPolicy) -> Result<Settings, CourierError> {
        let id = ObjectIdentifier(policy)
        if let settings = entries.withLockedValue({ entries in
            entries[id].flatMap { $0.policy === policy ? $0.settings : nil }
        }) {
            return settings
        }
        let made = makeSettings(for: policy)
        let (settings, isNew) = entries.withLockedValue { entries -> (Result<Settings, CourierError>, Bool) in
            // Checked under this lock, which `shutdown()` takes to empty the registry: no client
            // made here outlives a shutdown.
            if isShutDown.withLockedValue({ $0 }) {
                return (
                    .failure(
                        .serverTrustEvaluationFailed(
                            reason: .unsupported(host: policy.host, reason: "the transport was invalidated")
                        )
                    ), false
                )
            }
            if let existing = entries[id], existing.policy === policy { return (existing.settings, false) }
            entries[id] = Entry(policy: policy, settings: made)
            return (made, true)
        }
        if isNew {
            // Runs in the policy's deinit, when its weak reference here is already `nil` and no
            // other object can have its address yet.
            policy.whenReleased { [weak self] in self?.release(id) }
        } else if let unused = (try? made.get())?.client {
            Self.shutDownSoon(unused)
        }
        return settings
    }

    /// Shuts down every client made for a policy, for a transport being invalidated.
    func shutdown() async {
        let clients = entries.withLockedValue { entries -> [HTTPClient] in
            isShutDown.withLockedValue { $0 = true }
            defer { entries.removeAll() }
            let ocsp = ocspClient.withLockedValue { client in
                defer { client = nil }
                return client
            }
            return entries.values.compactMap(\.client) + [ocsp].compactMap { $0 }
        }
        for client in clients { await Self.shutDown(client) }
    }

    /// The configuration of the client OCSP queries go out on: no redirects, no tracing, a
    /// refused connection reported at once, through `proxy`.
    static func ocspConfiguration(proxy: HTTPClient.Configuration.Proxy?) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: OCSPQuery.timeout, read: OCSPQuery.timeout)
        )
        configuration.proxy = proxy
        configuration.tracing.tracer = nil
        // A responder that refuses is the answer, not something to wait out with backoffs.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// Whether a chain rebuilt for `policy` can be checked against every root its handshake
    /// trusts (see `CertificateChain.knowsRoots`).
    func knowsRoots(for policy: ServerTrustPolicy) -> Bool {
        #if os(Linux)
        // Asked for every request with revocation checks: no configuration built where the
        // answer does not depend on it.
        return true
        #else
        guard
            let tls = try? Self.tlsConfiguration(
                for: policy,
                base: configuration.tlsConfiguration ?? .makeClientConfiguration()
            )
        else { return true }
        return CertificateChain.knowsRoots(of: tls)
        #endif
    }

    /// Whether the policies' connections go straight to servers, so that a second connection can
    /// read what a server presents (its chain): not through a proxy.
    var readsChains: Bool { probes != nil }

    /// The client for OCSP queries, made on first use; `nil` once ``shutdown()`` has run (which
    /// takes it under `entries`' lock, after setting `isShutDown`).
    private func makeOCSPClient() -> HTTPClient? {
        ocspClient.withLockedValue { client in
            if let client { return client }
            if isShutDown.withLockedValue({ $0 }) { return nil }
            let configuration = Self.ocspConfiguration(proxy: self.configuration.proxy)
            let made = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
            client = made
            return made
        }
    }

    /// Lets go of a policy that has gone.
    private func release(_ id: ObjectIdentifier) {
        let client = entries.withLockedValue { entries -> HTTPClient? in
            guard let entry = entries[id], entry.policy == nil else { return nil }
            entries[id] = nil
            return entry.client
        }
        if let client { Self.shutDownSoon(client) }
    }

    private static func shutDownSoon(_ client: HTTPClient) {
        Task { await shutDown(client) }
    }

    /// Shuts `client` down once its loops have run what is queued: a connection goes back to the
    /// pool in a callback queued after its request completed, and shutting down before that trips
    /// a precondition in AsyncHTTPClient's pool (as `AsyncHTTPClientTransport.invalidate()` explains).
    private static func shutDown(_ client: HTTPClient) async {
        for _ in 0..<2 {
            for eventLoop in client.eventLoopGroup.makeIterator() {
                try? await eventLoop.submit {}.get()
            }
        }
        try? await client.shutdown()
    }

    private func makeSettings(for policy: ServerTrustPolicy) -> Result<Settings, CourierError> {
        let tlsConfiguration: TLSConfiguration
        do {
            tlsConfiguration = try Self.tlsConfiguration(
                for: policy,
                base: configuration.tlsConfiguration ?? .makeClientConfiguration()
            )
        } catch {
            return .failure(error)
        }
        let checksRevocation = policy.handshakeChecks.checksRevocation
        guard policy.evaluator != nil || checksRevocation else {
            return .success(Settings(tlsConfiguration: tlsConfiguration, client: nil))
        }
        var configuration = configuration
        configuration.tlsConfiguration = tlsConfiguration
        // A refused connection is the answer, not something to try again after a backoff.
        configuration.connectionPool.retryConnectionEstablishment = false
        var revocation: RevocationCheck?
        if checksRevocation {
            guard let ocspClient = makeOCSPClient() else {
                return .failure(
                    .serverTrustEvaluationFailed(
                        reason: .unsupported(host: policy.host, reason: "the transport was invalidated")
                    )
                )
            }
            revocation = RevocationCheck(client: ocspClient, options: policy.handshakeChecks.revocationOptions)
        }
        let evaluation = Evaluation(policy: policy, probes: probes, tls: tlsConfiguration, revocation: revocation)
        let userHTTP1Initializer = configuration.http1_1ConnectionDebugInitializer
        let userHTTP2Initializer = configuration.http2ConnectionDebugInitializer
        configuration.http1_1ConnectionDebugInitializer = { channel in
            evaluation.check(channel).flatMap {
                userHTTP1Initializer?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            }
        }
        configuration.http2ConnectionDebugInitializer = { channel in
            evaluation.check(channel).flatMap {
                userHTTP2Initializer?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            }
        }
        let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        return .success(Settings(tlsConfiguration: tlsConfiguration, client: client))
    }

    /// `base` (the transport's own TLS configuration) with `policy`'s checks, roots and client
    /// certificate: what the policy does not set stays as the transport's configuration has it.
    static func tlsConfiguration(
        for policy: ServerTrustPolicy,
        base: TLSConfiguration
    ) throws(CourierError)
        -> TLSConfiguration
    {
        var tls = base
        let checks = policy.handshakeChecks
        tls.certificateVerification =
            !checks.validatesCertificateChain
            ? .none : checks.validatesHost ? .fullVerification : .noHostnameVerification
        if checks.trustsOnlyAdditionalRoots {
            tls.trustRoots = .certificates(try checks.additionalTrustRoots.map(Self.nioCertificate))
            tls.additionalTrustRoots = []
        } else {
            switch policy.trustRoots {
            case .system:
                break
            case .systemAnd(let certificates):
                tls.trustRoots = .default
                tls.additionalTrustRoots = [.certificates(try certificates.map(Self.nioCertificate))]
            case .only(let certificates):
                tls.trustRoots = .certificates(try certificates.map(Self.nioCertificate))
                tls.additionalTrustRoots = []
            }
            if !checks.additionalTrustRoots.isEmpty {
                tls.additionalTrustRoots.append(.certificates(try checks.additionalTrustRoots.map(Self.nioCertificate)))
            }
        }
        if let identity = policy.clientCertificate {
            tls.certificateChain = try identity.certificateChain.map { certificate throws(CourierError) in
                .certificate(try Self.nioCertificate(certificate))
            }
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: identity.privateKey.derEncoded, format: .der))
            } catch {
                throw .invalidCertificate(reason: "the client certificate's private key is not one the TLS stack reads")
            }
        }
        return tls
    }

    private static func nioCertificate(_ certificate: TLSCertificate) throws(CourierError) -> NIOSSLCertificate {
        do {
            return try NIOSSLCertificate(bytes: certificate.derEncoded, format: .der)
        } catch {
            throw .invalidCertificate(
                reason: "a certificate (\(certificate.publicKeyPin)) is not one the TLS stack reads"
            )
        }
    }
}
