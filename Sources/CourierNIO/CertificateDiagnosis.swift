@_spi(CourierTransport) import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import X509

/// Why a server's certificate was refused, in words a person can act on: BoringSSL reports every
/// refusal of a chain as one `CERTIFICATE_VERIFY_FAILED`, without saying whether the certificate
/// expired or its root is unknown. Under a session's trust settings, the transport then opens one
/// more connection to the server (only when its own connections go straight there: no proxy, no
/// DNS override), reads the chain it presents (`ServerCertificateProbe`, within its time limit) and
/// says what is wrong with it, against the roots the handshake trusted. Nothing is sent on that
/// connection.
///
/// What the server shows the second time only shapes the message; the request has already failed.
enum CertificateDiagnosis {
    /// The reason when nothing more precise can be said.
    static let generalProblem =
        "its chain does not lead to a root the session trusts, or a certificate in it is not acceptable "
        + "(out of its dates, or a key usage or signature BoringSSL refuses)"

    /// Whether `error` is a refused chain, which this can say more about (a certificate for
    /// another host is reported as such already).
    static func applies(to error: any Error) -> Bool {
        guard case .handshakeFailed(let failure) = error as? NIOSSLError else { return false }
        return "\(failure)".contains("CERTIFICATE_VERIFY_FAILED")
    }

    /// One diagnosis per server and policy at a time, its answer kept for a few seconds: every
    /// request queued on a refused connection fails at once with the same error, and each would
    /// otherwise open a connection of its own.
    final class Cache: Sendable {
        private struct Entry {
            let problem: EventLoopFuture<String>
            let madeAt: NIODeadline
        }

        private struct Key: Hashable {
            let host: String
            let port: Int
            let policy: ObjectIdentifier
        }

        private static let lifetime = TimeAmount.seconds(10)
        private static let maximumEntries = 64
        private let eventLoopGroup: any EventLoopGroup
        private let entries = NIOLockedValueBox([Key: Entry]())

        init(eventLoopGroup: any EventLoopGroup) {
            self.eventLoopGroup = eventLoopGroup
        }

        /// What is wrong with the certificate of the server at `host` (normalised: no brackets)
        /// and `port` under `tls`, the settings of the policy `policy` names; ``generalProblem``
        /// when it cannot be read.
        func problem(
            host: String,
            port: Int,
            tls: TLSConfiguration,
            policy: ObjectIdentifier
        ) -> EventLoopFuture<String> {
            let key = Key(host: host, port: port, policy: policy)
            let now = NIODeadline.now()
            let eventLoop = eventLoopGroup.any()
            return entries.withLockedValue { entries in
                if let entry = entries[key], now - entry.madeAt < Self.lifetime { return entry.problem }
                entries = entries.filter { now - $0.value.madeAt < Self.lifetime }
                let problem = CertificateDiagnosis.problem(host: host, port: port, tls: tls, on: eventLoop)
                if entries.count < Self.maximumEntries { entries[key] = Entry(problem: problem, madeAt: now) }
                return problem
            }
        }
    }

    /// What is wrong with the chain the server at `host`:`port` shows a connection made with
    /// `tls`, or ``generalProblem``.
    static func problem(
        host: String,
        port: Int,
        tls: TLSConfiguration,
        on eventLoop: any EventLoop,
        now: Date = Date()
    )
        -> EventLoopFuture<String>
    {
        let context: NIOSSLContext
        do {
            context = try ServerCertificateProbe.context(like: tls)
        } catch {
            return eventLoop.makeSucceededFuture(generalProblem)
        }
        let roots = CertificateChain(tls: tls).roots
        return ServerCertificateProbe.presentedCertificates(host: host, port: port, context: context, on: eventLoop)
            .flatMap { presented in
                let certificates = presented.prefix(CertificateChain.maximumCandidates).compactMap { certificate in
                    (try? certificate.toDERBytes()).flatMap { try? Certificate(derEncoded: $0) }
                }
                return eventLoop.makeFutureWithTask { await describe(certificates, roots: roots, now: now) }
            }
            .recover { _ in generalProblem }
    }

    /// What is wrong with the chain `presented` (the server's certificate first), which a
    /// handshake under `roots` refused: a certificate of it out of its dates (the server's own, or
    /// one it is issued through), a self-signed one, a root the session does not trust, an
    /// intermediate the server did not send, or what swift-certificates' checks refuse.
    static func describe(_ presented: [Certificate], roots: CertificateStore?, now: Date) async -> String {
        guard let leaf = presented.first else { return generalProblem }
        let linked = CertificateChain.linked(from: leaf, through: Array(presented.dropFirst()), now: now)
        let format = ISO8601DateFormatter()
        for (index, certificate) in linked.enumerated() {
            let whose = index == 0 ? "its certificate" : "the certificate it is issued through, \(certificate.subject),"
            if certificate.notValidAfter < now {
                return "\(whose) expired on \(format.string(from: certificate.notValidAfter))"
            }
            if certificate.notValidBefore > now {
                return "\(whose) is not valid before \(format.string(from: certificate.notValidBefore))"
            }
        }
        if linked.count == 1, leaf.issuer == leaf.subject {
            return "its certificate is self-signed and not among the roots the session trusts"
        }
        guard let roots, let top = linked.last else { return generalProblem }
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy()
            ServerAuthenticationPolicy()
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(linked.dropFirst())) {
        case .validCertificate:
            // BoringSSL refused what swift-certificates accepts: nothing more precise to say.
            return generalProblem
        case .couldNotValidate(let failures):
            if let failure = failures.first {
                let root = failure.chain.last.map { "\($0.subject)" } ?? "a root"
                return "its chain to \(root) is refused: \(failure.policyFailureReason)"
            }
        }
        if top.issuer == top.subject {
            return "its chain leads to \(top.subject), which is not among the roots the session trusts"
        }
        return "its chain leads to \(top.issuer), which is not among the roots the session trusts, and whose "
            + "certificate the server did not send (as it must if that is an intermediate)"
    }
}
