import AsyncHTTPClient
@_spi(CourierTransport) import Courier
import NIOConcurrencyHelpers
import NIOCore
import SwiftASN1
import X509

/// Checks with OCSP whether a chain Courier rebuilt (`CertificateChain`) holds a revoked
/// certificate, with swift-certificates' `OCSPVerifierPolicy`: every certificate but the root
/// that names a responder is asked about (`OCSPQuery`), and the answer's signature, times and
/// certificate are checked.
///
/// A chain's verdict is kept for ``lifetime`` by its server certificate, when it is final: a
/// `good` answer (or none needed) and a revocation. A responder that could not be asked is asked
/// again by the next connection.
final class RevocationCheck: Sendable {
    static let lifetime = TimeAmount.minutes(10)
    static let maximumEntries = 256

    private struct Entry {
        let problem: String?
        let madeAt: NIODeadline
    }

    private let query: OCSPQuery
    private let entries = NIOLockedValueBox([[UInt8]: Entry]())

    /// A check asking over `client`, as `options` say (``RevocationTrustEvaluator/Options``).
    init(client: HTTPClient, options: RevocationTrustEvaluator.Options) {
        query = OCSPQuery(client: client, requiresAnswer: options.contains(.requirePositiveResponse))
    }

    /// Why the server must be refused: a certificate of `chain` (the server's first, then each
    /// issuer; `[server]` alone when no chain was rebuilt) is revoked, or, when answers are
    /// required, its status is not known to be good. `nil` when it may go on.
    func problem(with chain: [Certificate], serverCertificate: [UInt8]) async -> String? {
        let now = NIODeadline.now()
        if let entry = entries.withLockedValue({ $0[serverCertificate] }), now - entry.madeAt < Self.lifetime {
            return entry.problem
        }
        guard let leaf = chain.first, let root = chain.last, chain.count > 1 else {
            return query.requiresAnswer
                ? "its revocation could not be checked: the chain to its issuer could not be rebuilt" : nil
        }
        let query = self.query
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            AcceptedChainPolicy(chain: chain)
            OCSPVerifierPolicy(failureMode: query.requiresAnswer ? .hard : .soft, requester: query)
        }
        let problem: String?
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(chain.dropFirst().dropLast())) {
        case .validCertificate:
            problem = nil
        case .couldNotValidate(let failures):
            let reason = failures.first.map { "\($0.policyFailureReason)" } ?? "no answer"
            problem =
                reason.contains("revoked")
                ? "it has been revoked (\(reason))" : "its revocation status could not be confirmed (\(reason))"
        }
        if problem == nil || problem?.hasPrefix("it has been revoked") == true {
            entries.withLockedValue { entries in
                if entries.count >= Self.maximumEntries {
                    entries = entries.filter { now - $0.value.madeAt < Self.lifetime }
                    if entries.count >= Self.maximumEntries { entries.removeAll() }
                }
                entries[serverCertificate] = Entry(problem: problem, madeAt: now)
            }
        }
        return problem
    }

    /// Lets through the chain that was already checked (or deliberately not) when it was rebuilt,
    /// taking on its critical extensions, so that the verifier only adds the OCSP policy's checks.
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
