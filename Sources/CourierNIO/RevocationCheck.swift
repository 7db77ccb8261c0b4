import AsyncHTTPClient
@_spi(CourierTransport) import Courier
import NIOConcurrencyHelpers
import NIOCore
import SwiftASN1
import X509

/// Checks with OCSP whether a chain Courier rebuilt (`CertificateChain`) holds a revoked
/// certificate, with swift-certificates' `OCSPVerifierPolicy`: every certificate below the root
/// that names a responder is asked about (`OCSPQuery`), and each answer's signature, times and
/// certificate are checked.
///
/// What the server does cannot switch the check off. A chain that could not be rebuilt is refused
/// in every mode (the server answers the probe that reads its chain, and an intermediate it hides
/// there could be revoked), and so is a chain that ends at a trusted certificate that is not
/// self-signed while it names a responder (its top could never be asked about).
///
/// Without ``RevocationTrustEvaluator/Options/requirePositiveResponse`` the policy runs in its soft
/// mode: a responder that cannot be asked, or an answer that is not `good` or `revoked`, passes
/// that certificate and the next one is asked, so only a revocation refuses; a certificate that
/// names only a CRL goes unchecked. With it, the hard mode: the first certificate not known to be
/// good refuses the server, as does one that names only a CRL.
///
/// Kept for ``lifetime`` by server certificate: revocations, and, in the hard mode, a chain whose
/// every certificate was answered `good` (a soft pass may hide answers that could not be had, and
/// is asked again by the next connection). Connections that check one server certificate at once
/// share one check, on the chain the first of them rebuilt (another may rebuild it through other
/// intermediates the server sent; all are tied to the same certificate by signatures).
final class RevocationCheck: Sendable {
    static let lifetime = TimeAmount.minutes(10)
    static let maximumEntries = 256
    /// How swift-certificates words a revocation (`OCSPVerifierPolicy`); a test pins it.
    static let revokedReasonPrefix = "revoked through OCSP"
    /// The OID of the CRL distribution points extension (RFC 5280, 4.2.1.13).
    private static let crlDistributionPoints: ASN1ObjectIdentifier = [2, 5, 29, 31]

    private struct Entry {
        let problem: String?
        let madeAt: NIODeadline
    }

    private let query: OCSPQuery
    /// Whether a certificate whose status is not known to be good refuses the server.
    private var requiresAnswer: Bool { query.requiresAnswer }
    private let entries = NIOLockedValueBox([[UInt8]: Entry]())
    /// The checks under way, by server certificate: connections a pool opens at once to one
    /// server wait for one check rather than each asking the responders.
    private let underWay = NIOLockedValueBox([[UInt8]: Task<String?, Never>]())

    /// A check asking over `client`, as `options` say (``RevocationTrustEvaluator/Options``).
    init(client: HTTPClient, options: RevocationTrustEvaluator.Options) {
        query = OCSPQuery(client: client, requiresAnswer: options.contains(.requirePositiveResponse))
    }

    /// Why the server must be refused, or `nil` when it may go on.
    func problem(with chain: CertificateChain.Rebuilt, serverCertificate: [UInt8]) async -> String? {
        let kept = entries.withLockedValue { entries -> Entry? in
            entries[serverCertificate].flatMap { .now() - $0.madeAt < Self.lifetime ? $0 : nil }
        }
        if let kept { return kept.problem }
        let (task, isOwn) = underWay.withLockedValue { underWay -> (Task<String?, Never>, Bool) in
            if let task = underWay[serverCertificate] { return (task, false) }
            let task = Task { await self.decide(chain, serverCertificate: serverCertificate) }
            underWay[serverCertificate] = task
            return (task, true)
        }
        let problem = await task.value
        if isOwn { underWay.withLockedValue { $0[serverCertificate] = nil } }
        return problem
    }

    private func decide(_ rebuilt: CertificateChain.Rebuilt, serverCertificate: [UInt8]) async -> String? {
        let now = NIODeadline.now()
        let chain = rebuilt.parsed
        guard let leaf = chain.first, let top = chain.last else {
            return "its revocation could not be checked: its certificate could not be read"
        }
        guard rebuilt.isRebuilt else {
            // Only the server's certificate is known: one it was issued through may be hidden.
            return "its revocation could not be checked: the chain it was accepted through could not be rebuilt"
        }
        let names = chain.map(Self.revocationSources)
        // The top's own issuer is not in the chain: only a root's status needs no asking.
        if top.issuer != top.subject, let topNames = names.last, topNames.ocsp || (requiresAnswer && topNames.crl) {
            return "its revocation cannot be checked: its chain ends at a trusted certificate that is not "
                + "self-signed (\(top.subject)), whose own status no one can be asked about"
        }
        let below = zip(chain, names).dropLast()
        if requiresAnswer, let onlyCRL = below.first(where: { $0.1.crl && !$0.1.ocsp }) {
            return "its revocation could not be confirmed: \(onlyCRL.0.subject) names only a certificate "
                + "revocation list, which Courier does not read"
        }
        guard below.contains(where: { $0.1.ocsp }) else { return nil }
        let query = self.query
        var verifier = Verifier(rootCertificates: CertificateStore([top])) {
            AcceptedChainPolicy(chain: chain)
            OCSPVerifierPolicy(failureMode: query.requiresAnswer ? .hard : .soft, requester: query)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(chain.dropFirst().dropLast()))
        let problem: String?
        switch result {
        case .validCertificate:
            // A soft pass may hide answers that could not be had: not kept.
            guard requiresAnswer else { return nil }
            problem = nil
        case .couldNotValidate(let failures):
            let reasons = failures.map { "\($0.policyFailureReason)" }
            if let revocation = reasons.first(where: { $0.hasPrefix(Self.revokedReasonPrefix) }) {
                problem = "it has been revoked (\(revocation))"
            } else if requiresAnswer {
                return "its revocation status could not be confirmed (\(reasons.first ?? "no answer"))"
            } else {
                // Not a revocation (a root that names a responder, which the policy refuses in
                // either mode): a best attempt lets it through, and asks again next time.
                return nil
            }
        }
        entries.withLockedValue { entries in
            if entries.count >= Self.maximumEntries {
                entries = entries.filter { now - $0.value.madeAt < Self.lifetime }
                if entries.count >= Self.maximumEntries { entries.removeAll() }
            }
            entries[serverCertificate] = Entry(problem: problem, madeAt: now)
        }
        return problem
    }

    /// Whether `certificate` names an OCSP responder, and a CRL.
    private static func revocationSources(of certificate: Certificate) -> (ocsp: Bool, crl: Bool) {
        // An extension that cannot be read counts as naming a responder: the policy then fails
        // on it, rather than the certificate going unchecked.
        let ocsp: Bool
        do {
            ocsp = try certificate.extensions.authorityInformationAccess?.contains { $0.method == .ocspServer } ?? false
        } catch {
            ocsp = true
        }
        return (ocsp, certificate.extensions[oid: crlDistributionPoints] != nil)
    }

    /// Lets through the chain that was already checked when it was rebuilt, taking on its
    /// critical extensions, so that the verifier only adds the OCSP policy's checks.
    private struct AcceptedChainPolicy: VerifierPolicy {
        let verifyingCriticalExtensions: [ASN1ObjectIdentifier]

        init(chain: [Certificate]) {
            verifyingCriticalExtensions = Array(
                Set(chain.flatMap { certificate in certificate.extensions.filter(\.critical).map(\.oid) })
            )
        }

        mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
            .meetsPolicy
        }
    }
}
