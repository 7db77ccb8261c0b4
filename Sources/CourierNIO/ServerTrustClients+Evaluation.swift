@_spi(CourierTransport) import Courier
import NIOCore
import NIOSSL

extension ServerTrustClients {
    /// How one policy's connections are checked once their handshake is done, before the pool
    /// hands them to a request: its evaluator runs on the server's certificate, and, unless that
    /// settles it (``ServerTrustPolicy/acceptsOnServerCertificateAlone``), on the whole chain the
    /// certificate was accepted through (`CertificateChain`, from what `ServerCertificateProbe`
    /// reads once per server certificate); then, when the policy checks revocation, the chain's
    /// certificates are looked up with OCSP (`RevocationCheck`).
    struct Evaluation: Sendable {
        /// The host the policy is for.
        let host: String
        /// The policy, weakly: the client whose connections this checks lives in the registry's
        /// entry for the policy, and would otherwise keep the policy (and so itself) alive for good.
        private let reference: PolicyReference
        let chain: CertificateChain
        /// `nil` when the connections go through a proxy: only the server's certificate is seen.
        let probes: ServerCertificateProbe.Cache?
        /// What probes connect with: the policy's TLS settings, so that the server shows the same
        /// certificate as to the policy's own connections.
        let probeContext: NIOSSLContext?
        /// The OCSP check, when the policy asks for revocation to be checked.
        let revocation: RevocationCheck?

        init(
            policy: ServerTrustPolicy,
            probes: ServerCertificateProbe.Cache?,
            tls: TLSConfiguration,
            revocation: RevocationCheck?
        ) {
            host = policy.host
            reference = PolicyReference(policy)
            self.chain = CertificateChain(tls: tls)
            self.probes = probes
            probeContext = try? ServerCertificateProbe.context(like: tls)
            self.revocation = revocation
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
            // own, most often, and then the rest of the chain is not needed (unless for revocation).
            let acceptedAlready = policy.acceptsOnServerCertificateAlone && policy.evaluate([shown]) == nil
            if acceptedAlready, revocation == nil { return eventLoop.makeSucceededVoidFuture() }
            let presented: EventLoopFuture<[NIOSSLCertificate]>
            if let probes, let probeContext, let address = channel.remoteAddress {
                presented = probes.presentedCertificates(
                    at: address,
                    serverName: ServerCertificateProbe.isIPAddress(host) ? nil : host,
                    proved: shown.derEncoded,
                    context: probeContext,
                    on: eventLoop
                ).hop(to: eventLoop)
            } else {
                // The server's certificate is all there is to see.
                presented = eventLoop.makeSucceededFuture([])
            }
            let chain = self.chain
            let revocation = self.revocation
            let host = self.host
            return presented.recover { _ in
                // No probe got through: the server's certificate alone.
                []
            }.flatMap { presented in
                eventLoop.makeFutureWithTask { () -> CourierError? in
                    let rebuilt = await chain.rebuild(from: shown, presented: presented)
                    if !acceptedAlready, let refusal = try currentPolicy().evaluate(rebuilt.certificates) {
                        return refusal
                    }
                    if let revocation,
                        let problem = await revocation.problem(
                            with: rebuilt,
                            serverCertificate: shown.derEncoded
                        )
                    {
                        return .serverTrustEvaluationFailed(reason: .certificateRejected(host: host, problem: problem))
                    }
                    return nil
                }
            }.flatMapThrowing { refusal in
                if let refusal { throw refusal }
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
