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

    /// One diagnosis per server and TLS settings at a time, its answer kept for a few seconds: every
    /// request queued on a refused connection fails at once with the same error, and each would
    /// otherwise open a connection of its own.
    final class Cache: Sendable {
        private struct Entry {
            let problem: EventLoopFuture<String?>
            let madeAt: NIODeadline
        }

        /// What is diagnosed: the server's chain, or the server's verdict on the client certificate.
        private enum Kind: Hashable {
            case chain, clientCertificate
        }

        /// By the TLS settings, which decide what the server shows and what the diagnosis checks
        /// it against (not by the policy object, whose address a later one may take).
        private struct Key: Hashable {
            let kind: Kind
            let host: String
            let port: Int
            let tls: TLSConfiguration

            static func == (left: Key, right: Key) -> Bool {
                left.kind == right.kind && left.host == right.host && left.port == right.port
                    && left.tls.bestEffortEquals(right.tls)
            }

            func hash(into hasher: inout Hasher) {
                hasher.combine(kind)
                hasher.combine(host)
                hasher.combine(port)
                tls.bestEffortHash(into: &hasher)
            }
        }

        private static let lifetime = TimeAmount.seconds(10)
        private static let maximumEntries = 64
        private let eventLoopGroup: any EventLoopGroup
        private let entries = NIOLockedValueBox([Key: Entry]())

        init(eventLoopGroup: any EventLoopGroup) {
            self.eventLoopGroup = eventLoopGroup
        }

        /// What is wrong with the certificate of the server at `host` (normalised: no brackets)
        /// and `port` under `tls`, a policy's settings; ``generalProblem`` when it cannot be read.
        func problem(host: String, port: Int, tls: TLSConfiguration) -> EventLoopFuture<String> {
            diagnosis(Key(kind: .chain, host: host, port: port, tls: tls)) { eventLoop in
                CertificateDiagnosis.problem(host: host, port: port, tls: tls, on: eventLoop).map { $0 }
            }.map { $0 ?? generalProblem }
        }

        /// What the server at `host` and `port` says of the client certificate (or its absence)
        /// of a connection made with `tls`; `nil` when it says nothing against it.
        func clientCertificateProblem(host: String, port: Int, tls: TLSConfiguration) -> EventLoopFuture<String?> {
            diagnosis(Key(kind: .clientCertificate, host: host, port: port, tls: tls)) { eventLoop in
                CertificateDiagnosis.clientCertificateProblem(host: host, port: port, tls: tls, on: eventLoop)
            }
        }

        /// The diagnosis for `key` under way or kept, else one `make` starts.
        private func diagnosis(
            _ key: Key,
            make: (any EventLoop) -> EventLoopFuture<String?>
        ) -> EventLoopFuture<String?> {
            let now = NIODeadline.now()
            let eventLoop = eventLoopGroup.any()
            return entries.withLockedValue { entries in
                if let entry = entries[key], now - entry.madeAt < Self.lifetime { return entry.problem }
                entries = entries.filter { now - $0.value.madeAt < Self.lifetime }
                let problem = make(eventLoop)
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
        let chain = CertificateChain(tls: tls)
        return ServerCertificateProbe.presentedCertificates(host: host, port: port, context: context, on: eventLoop)
            .flatMap { presented in
                let certificates = presented.prefix(CertificateChain.maximumCandidates).compactMap { certificate in
                    (try? certificate.toDERBytes()).flatMap { try? Certificate(derEncoded: $0) }
                }
                return eventLoop.makeFutureWithTask {
                    await describe(certificates, roots: chain.roots, knowsRoots: chain.knowsRoots, now: now)
                }
            }
            .recover { _ in generalProblem }
    }

    /// What the server at `host`:`port` says of the client certificate of a connection made with
    /// `tls` (all its settings: its roots, and its client certificate if it has one), within a
    /// second of the handshake; `nil` when it says nothing against it.
    static func clientCertificateProblem(
        host: String,
        port: Int,
        tls: TLSConfiguration,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<String?> {
        let showsCertificate = !tls.certificateChain.isEmpty
        return ServerCertificateProbe.alertAfterHandshake(host: host, port: port, configuration: tls, on: eventLoop)
            .map { alert in alert.flatMap { clientCertificateProblem(in: $0, showsCertificate: showsCertificate) } }
            .recover { _ in nil }
    }

    /// What a TLS failure's `text` says of the client certificate, or `nil`: a server asks for a
    /// missing certificate with `certificate_required`; the other alerts are about a certificate
    /// the client showed, so they mean that only when it showed one.
    static func clientCertificateProblem(in text: String, showsCertificate: Bool) -> String? {
        let aboutShownCertificate =
            showsCertificate
            && (text.contains("ALERT_BAD_CERTIFICATE") || text.contains("ALERT_UNKNOWN_CA")
                || text.contains("ALERT_CERTIFICATE_UNKNOWN"))
        guard text.contains("ALERT_CERTIFICATE_REQUIRED") || aboutShownCertificate else { return nil }
        return showsCertificate
            ? "the server does not accept the session's client certificate"
            : "the server requires a client certificate, and the session has none (Session.Configuration.clientCertificate)"
    }

    /// What is wrong with the chain `presented` (the server's certificate first), which a
    /// handshake under `roots` refused: a certificate of it out of its dates (the server's own, or
    /// one it is issued through), a critical extension no check understands, a self-signed one, a
    /// root the session does not trust, an intermediate the server did not send or sent with
    /// another key, or what swift-certificates' RFC 5280 checks refuse. Without `knowsRoots` (the
    /// system's roots on Apple platforms, which swift-certificates does not read) only what needs
    /// no roots is said.
    static func describe(
        _ presented: [Certificate],
        roots: CertificateStore?,
        knowsRoots: Bool = true,
        now: Date
    ) async -> String {
        guard let leaf = presented.first else { return generalProblem }
        let others = Array(presented.dropFirst())
        let linked = CertificateChain.linked(from: leaf, through: others, now: now)
        if let roots, knowsRoots {
            var verifier = Verifier(rootCertificates: roots) {
                RFC5280Policy()
                ServerAuthenticationPolicy()
            }
            switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(linked.dropFirst())) {
            case .validCertificate:
                // BoringSSL refused what swift-certificates accepts: nothing more precise to say.
                return generalProblem
            case .couldNotValidate(let failures):
                // A path to a trusted root that fails a check: name the certificate at fault.
                if let failure = failures.first {
                    let path = Array(failure.chain)
                    if let dates = datesProblem(in: path, now: now) { return dates }
                    let root = path.last.map { name($0.subject) } ?? "a root"
                    return "its chain to \(root) is refused: \(clean("\(failure.policyFailureReason)"))"
                }
            }
        }
        if let dates = datesProblem(in: linked, now: now) { return dates }
        let understood = Set(
            RFC5280Policy().verifyingCriticalExtensions + ServerAuthenticationPolicy().verifyingCriticalExtensions
        )
        for certificate in linked {
            if let unknown = certificate.extensions.first(where: { $0.critical && !understood.contains($0.oid) }) {
                return
                    "\(name(certificate.subject)) has a critical extension no check here understands (\(unknown.oid))"
            }
        }
        if linked.count == 1, leaf.issuer == leaf.subject {
            return "its certificate is self-signed and not among the roots the session trusts"
        }
        guard roots != nil, knowsRoots, let top = linked.last else { return generalProblem }
        if top.issuer == top.subject {
            return "its chain leads to \(name(top.subject)), which is not among the roots the session trusts"
        }
        if others.contains(where: { $0.subject == top.issuer }) {
            return "the server sent a certificate for \(name(top.issuer)), but not the one that issued "
                + "\(name(top.subject)) (another key), and \(name(top.issuer)) is not among the roots the session trusts"
        }
        return "its chain leads to \(name(top.issuer)), which is not among the roots the session trusts, and whose "
            + "certificate the server did not send (as it must if that is an intermediate)"
    }

    /// The first certificate of `chain` (the server's first) out of its dates, said so.
    private static func datesProblem(in chain: [Certificate], now: Date) -> String? {
        let format = ISO8601DateFormatter()
        for (index, certificate) in chain.enumerated() {
            let whose =
                index == 0 ? "its certificate" : "the certificate it is issued through, \(name(certificate.subject)),"
            if certificate.notValidAfter < now {
                return "\(whose) expired on \(format.string(from: certificate.notValidAfter))"
            }
            if certificate.notValidBefore > now {
                return "\(whose) is not valid before \(format.string(from: certificate.notValidBefore))"
            }
        }
        return nil
    }

    /// A name from a certificate, fit for a message: control characters replaced, at most 200
    /// characters (a server chooses it).
    static func name(_ name: DistinguishedName) -> String {
        clean("\(name)")
    }

    /// `text` with its control characters replaced and cut to 200 characters.
    private static func clean(_ text: String) -> String {
        let scalars = text.unicodeScalars.prefix(200).map { scalar in
            scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
                ? "?" : Character(scalar)
        }
        return String(scalars) + (text.unicodeScalars.count > 200 ? "…" : "")
    }
}
