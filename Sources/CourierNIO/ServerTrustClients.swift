import AsyncHTTPClient
@_spi(CourierTransport) import Courier
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// How the AsyncHTTPClient transport applies each ``ServerTrustPolicy``: a `TLSConfiguration`
/// per policy (so AsyncHTTPClient pools only connections that trust alike), and, for a policy
/// whose evaluator looks at the certificates, a client of its own whose connections are checked
/// as soon as their handshake is done, before any request is written to them.
///
/// AsyncHTTPClient takes no verification callback (its issue #285): a client's connection
/// initializers are the one place where a connection's TLS handler can be read before the pool
/// hands the connection out, and they are per client, so a policy that evaluates gets a client.
/// Those clients share the transport's event loops and are shut down when their policy (its
/// session) has gone, at the next policy's arrival, or with the transport.
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
    }

    private let eventLoopGroup: any EventLoopGroup
    private let configuration: HTTPClient.Configuration
    private let entries = NIOLockedValueBox([ObjectIdentifier: Entry]())

    init(eventLoopGroup: any EventLoopGroup, configuration: HTTPClient.Configuration) {
        self.eventLoopGroup = eventLoopGroup
        self.configuration = configuration
    }

    deinit {
        // A transport that goes away without `invalidate()`: AsyncHTTPClient asserts when a
        // client is released without being shut down.
        let clients = entries.withLockedValue { entries in entries.values.compactMap { (try? $0.settings.get())?.client } }
        for client in clients { client.shutdown { _ in } }
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
        let (settings, released) = entries.withLockedValue { entries -> (Result<Settings, CourierError>, [HTTPClient]) in
            if let existing = entries[id], existing.policy === policy {
                return (existing.settings, (try? made.get())?.client.map { [$0] } ?? [])
            }
            // Entries whose policy has gone (its session with it) let go of their clients.
            var released: [HTTPClient] = []
            for (key, entry) in entries where entry.policy == nil {
                if let client = (try? entry.settings.get())?.client { released.append(client) }
                entries[key] = nil
            }
            if let replaced = entries[id], let client = (try? replaced.settings.get())?.client {
                released.append(client)
            }
            entries[id] = Entry(policy: policy, settings: made)
            return (made, released)
        }
        for client in released { client.shutdown { _ in } }
        return settings
    }

    /// Shuts down every client made for a policy.
    func shutdown() async {
        let clients = entries.withLockedValue { entries -> [HTTPClient] in
            defer { entries.removeAll() }
            return entries.values.compactMap { (try? $0.settings.get())?.client }
        }
        for client in clients { try? await client.shutdown() }
    }

    private func makeSettings(for policy: ServerTrustPolicy) -> Result<Settings, CourierError> {
        let tlsConfiguration: TLSConfiguration
        do {
            tlsConfiguration = try Self.tlsConfiguration(for: policy)
        } catch {
            return .failure(error)
        }
        guard policy.evaluator != nil else { return .success(Settings(tlsConfiguration: tlsConfiguration, client: nil)) }
        var configuration = configuration
        configuration.tlsConfiguration = tlsConfiguration
        // Weakly: the client lives in this registry's entry for the policy, and would otherwise
        // keep the policy (and so itself) alive for good.
        let reference = PolicyReference(policy)
        let check: @Sendable (Channel) -> EventLoopFuture<Void> = { channel in
            channel.nioSSL_peerCertificate().flatMapThrowing { certificate in
                guard let policy = reference.policy else {
                    throw CourierError.serverTrustEvaluationFailed(
                        reason: .unsupported(host: "", reason: "the session that made the request has gone")
                    )
                }
                try Self.evaluate(certificate, under: policy)
            }
        }
        configuration.http1_1ConnectionDebugInitializer = check
        configuration.http2ConnectionDebugInitializer = check
        let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        return .success(Settings(tlsConfiguration: tlsConfiguration, client: client))
    }

    /// A policy held weakly, for a closure that must not keep it.
    private final class PolicyReference: Sendable {
        weak let policy: ServerTrustPolicy?

        init(_ policy: ServerTrustPolicy) {
            self.policy = policy
        }
    }

    /// Runs `policy`'s evaluator on the certificate a connection's server showed.
    private static func evaluate(_ certificate: NIOSSLCertificate?, under policy: ServerTrustPolicy) throws {
        guard let certificate else {
            throw CourierError.serverTrustEvaluationFailed(
                reason: .certificateRejected(host: policy.host, problem: "the server showed no certificate")
            )
        }
        let shown: TLSCertificate
        do {
            shown = try TLSCertificate(derEncoded: certificate.toDERBytes())
        } catch {
            throw CourierError.serverTrustEvaluationFailed(
                reason: .certificateRejected(host: policy.host, problem: "its certificate could not be read")
            )
        }
        if let error = policy.evaluate([shown]) { throw error }
    }

    /// The handshake's checks, roots and client certificate for `policy`.
    static func tlsConfiguration(for policy: ServerTrustPolicy) throws(CourierError) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        let checks = policy.handshakeChecks
        tls.certificateVerification =
            !checks.validatesCertificateChain ? .none : checks.validatesHost ? .fullVerification : .noHostnameVerification
        let roots: [TLSCertificate]
        let replacesSystemRoots: Bool
        if checks.trustsOnlyAdditionalRoots {
            (roots, replacesSystemRoots) = (checks.additionalTrustRoots, true)
        } else {
            switch policy.trustRoots {
            case .system: (roots, replacesSystemRoots) = (checks.additionalTrustRoots, false)
            case .systemAnd(let certificates): (roots, replacesSystemRoots) = (certificates + checks.additionalTrustRoots, false)
            case .only(let certificates): (roots, replacesSystemRoots) = (certificates + checks.additionalTrustRoots, true)
            }
        }
        let rootCertificates = try roots.map(Self.nioCertificate)
        if replacesSystemRoots {
            tls.trustRoots = .certificates(rootCertificates)
        } else if !rootCertificates.isEmpty {
            tls.additionalTrustRoots = [.certificates(rootCertificates)]
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
            throw .invalidCertificate(reason: "a certificate (\(certificate.publicKeyPin)) is not one the TLS stack reads")
        }
    }
}
