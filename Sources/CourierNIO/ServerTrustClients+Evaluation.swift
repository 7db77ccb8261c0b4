@_spi(CourierTransport) import Courier
import NIOCore
import NIOSSL

extension ServerTrustClients {
    /// How one policy's connections are checked once their handshake is done, before the pool
    /// hands them to a request: its evaluator runs on the server's certificate, and, unless that
    /// settles it (``ServerTrustPolicy/acceptsOnServerCertificateAlone``), on the whole chain the
    /// certificate was accepted through (`CertificateChain`, from what `ServerCertificateProbe`
    /// reads once per server certificate).
    struct Evaluation: Sendable {
        /// The host the policy is for.
        let host: String
        /// The policy, weakly: the client whose connections this checks lives in the registry's
        /// entry for the policy, and would otherwise keep the policy (and so itself) alive for good.
        private let reference: PolicyReference
        let chain: CertificateChain
        /// `nil` when the connections go through a proxy: only the server's certificate is seen.
        let probes: ServerCertificateProbe.Cache?

        init(policy: ServerTrustPolicy, chain: CertificateChain, probes: ServerCertificateProbe.Cache?) {
            host = policy.host
            reference = PolicyReference(policy)
            self.chain = chain
            self.probes = probes
        }

        /// Runs the policy's evaluator on what `channel`'s server showed. A refused connection is
        /// closed here: AsyncHTTPClient only reports the failure of a connection its initializer
        /// refused, and would leave it open.
        func check(_ channel: any Channel) -> EventLoopFuture<Void> {
            channel.nioSSL_peerCertificate().flatMap { certificate in
                evaluate(certificate, on: channel)
            }.flatMapError { error in
                channel.close(promise: nil)
                return channel.eventLoop.makeFailedFuture(error)
            }
        }

        private func evaluate(_ certificate: NIOSSLCertificate?, on channel: any Channel) -> EventLoopFuture<Void> {
            let eventLoop = channel.eventLoop
            let policy: ServerTrustPolicy
            let shown: TLSCertificate
            do {
                policy = try currentPolicy()
                shown = try serverCertificate(certificate)
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
            // Courier's pinning evaluators accept on any certificate that matches: the server's
            // own, most often, and then the rest of the chain is not needed.
            if policy.acceptsOnServerCertificateAlone, policy.evaluate([shown]) == nil {
                return eventLoop.makeSucceededVoidFuture()
            }
            guard let probes, let address = channel.remoteAddress else {
                // The server's certificate is all there is to see.
                return policy.evaluate([shown]).map { eventLoop.makeFailedFuture($0) }
                    ?? eventLoop.makeSucceededVoidFuture()
            }
            let chain = self.chain
            let certificates = probes.presentedCertificates(
                at: address,
                serverName: ServerCertificateProbe.isIPAddress(host) ? nil : host,
                proved: shown.derEncoded,
                on: eventLoop
            )
            return certificates.hop(to: eventLoop).flatMap { presented in
                eventLoop.makeFutureWithTask { await chain.chain(from: shown, presented: presented) }
            }.recover { _ in
                // No probe got through: the server's certificate alone.
                [shown]
            }.flatMapThrowing { certificates in
                if let error = try currentPolicy().evaluate(certificates) { throw error }
            }
        }

        private func currentPolicy() throws(CourierError) -> ServerTrustPolicy {
            guard let policy = reference.policy else {
                throw .serverTrustEvaluationFailed(
                    reason: .unsupported(host: host, reason: "the session that made the request has gone")
                )
            }
            return policy
        }

        private func serverCertificate(_ certificate: NIOSSLCertificate?) throws(CourierError) -> TLSCertificate {
            guard let certificate else {
                throw .serverTrustEvaluationFailed(
                    reason: .certificateRejected(host: host, problem: "the server showed no certificate")
                )
            }
            do {
                return try TLSCertificate(derEncoded: certificate.toDERBytes())
            } catch {
                throw .serverTrustEvaluationFailed(
                    reason: .certificateRejected(host: host, problem: "its certificate could not be read")
                )
            }
        }
    }

    /// A policy held weakly, for a closure that must not keep it.
    private final class PolicyReference: Sendable {
        weak let policy: ServerTrustPolicy?

        init(_ policy: ServerTrustPolicy) {
            self.policy = policy
        }
    }
}
