import AsyncHTTPClient
import Courier
import CourierTestServer
import CourierTestSupport
import Crypto
import Foundation
import NIOPosix
import SwiftASN1
import Testing
import X509

@testable import CourierNIO

/// What `RevocationCheck` decides before asking anyone: chains it cannot check are refused
/// whatever the mode when they name a responder, so a server cannot dodge the check; CRL-only
/// certificates pass a best attempt and fail a required answer. No responder is reached.
@Suite struct RevocationCheckTests {
    private static let crlDistributionPoints: ASN1ObjectIdentifier = [2, 5, 29, 31]

    /// A certificate for `subject`, issued by `issuer` (itself when `nil`), naming an OCSP
    /// responder and a CRL as asked.
    private static func certificate(
        _ subject: String,
        issuer: (name: String, key: Certificate.PrivateKey)? = nil,
        key: Certificate.PrivateKey,
        ocsp: Bool = false,
        crl: Bool = false
    ) throws -> Certificate {
        var extensions = try Certificate.Extensions {
            if ocsp {
                AuthorityInformationAccess([
                    .init(method: .ocspServer, location: .uniformResourceIdentifier("http://127.0.0.1:9/ocsp"))
                ])
            }
        }
        if crl {
            // Presence is all the check reads; the value is an empty sequence.
            try extensions.append(
                Certificate.Extension(oid: crlDistributionPoints, critical: false, value: [0x30, 0x00])
            )
        }
        return try MadeCertificate.make(subject, key: key, issuer: issuer, extensions: extensions)
    }

    /// `chain` as `CertificateChain` hands it over; `isRebuilt: false` for a chain it could not
    /// rebuild, which holds the server's certificate alone.
    private static func rebuilt(_ chain: [Certificate], isRebuilt: Bool = true) -> CertificateChain.Rebuilt {
        CertificateChain.Rebuilt(certificates: [], parsed: chain, isRebuilt: isRebuilt)
    }

    private static func withCheck(
        _ options: RevocationTrustEvaluator.Options,
        _ body: (RevocationCheck) async throws -> Void
    ) async throws {
        let client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: ServerTrustClients.ocspConfiguration(proxy: nil)
        )
        try await body(RevocationCheck(client: client, options: options))
        try await client.shutdown()
    }

    /// Connections that check one server certificate at once share one check: the responder,
    /// slow to answer, is asked once, and everyone hears its `good`.
    @Test func checksOfOneCertificateAtOnceAskOnce() async throws {
        let authority = try TestCertificateAuthority()
        let responder = TestCertificateAuthority.OCSPResponder(authority: authority)
        try await TestServer.withRunningServer(configuration: .init { $0.ocspResponder = responder }) { ocsp in
            let issued = try authority.issue(ocspResponder: ocsp.url("/ocsp?delay=0.5"))
            let chain = try [
                Certificate(pemEncoded: issued.certificatePEM), Certificate(pemEncoded: authority.certificatePEM),
            ]
            try await Self.withCheck([.ocsp, .requirePositiveResponse]) { check in
                let problems = await withTaskGroup(of: String?.self) { group in
                    for _ in 0..<4 {
                        group.addTask { await check.problem(with: Self.rebuilt(chain), serverCertificate: [7]) }
                    }
                    return await group.reduce(into: [String?]()) { $0.append($1) }
                }
                #expect(problems == [nil, nil, nil, nil])
                #expect(ocsp.attempts(forKey: "ocsp") == 1)
                // Kept: asked again, the responder is not.
                #expect(await check.problem(with: Self.rebuilt(chain), serverCertificate: [7]) == nil)
                #expect(ocsp.attempts(forKey: "ocsp") == 1)
            }
        }
    }

    /// A chain the transport could not rebuild (the server answered the probe otherwise, say) is
    /// refused in a best attempt too, whether or not the server's certificate names a responder:
    /// a certificate it was issued through may be hidden there, and revoked.
    @Test func aServerThatHidesItsChainIsRefusedEvenInABestAttempt() async throws {
        let rootKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let naming = try Self.certificate(
            "leaf",
            issuer: ("root", rootKey),
            key: .init(P256.Signing.PrivateKey()),
            ocsp: true
        )
        let silent = try Self.certificate("leaf", issuer: ("root", rootKey), key: .init(P256.Signing.PrivateKey()))
        try await Self.withCheck(.any) { check in
            for (leaf, key) in [(naming, UInt8(1)), (silent, 2)] {
                let problem = await check.problem(
                    with: Self.rebuilt([leaf], isRebuilt: false),
                    serverCertificate: [key]
                )
                #expect(problem?.contains("could not be rebuilt") == true, "\(String(describing: problem))")
            }
            let unread = await check.problem(with: Self.rebuilt([], isRebuilt: false), serverCertificate: [3])
            #expect(unread?.contains("could not be read") == true)
        }
    }

    /// In a best attempt, a responder that cannot be reached passes its certificate and the next
    /// one is asked: a revoked intermediate is found behind a server certificate whose responder
    /// is down.
    @Test func aBestAttemptAsksPastAResponderThatIsDown() async throws {
        let root = try TestCertificateAuthority()
        let responder = TestCertificateAuthority.OCSPResponder(authority: root)
        let closed = try ClosedPort()
        try await TestServer.withRunningServer(configuration: .init { $0.ocspResponder = responder }) { ocsp in
            let intermediate = try root.intermediate(ocspResponder: ocsp.url("/ocsp"))
            try responder.revoke(authority: intermediate)
            let issued = try intermediate.issue(ocspResponder: URL(string: "http://127.0.0.1:\(closed.port)/ocsp"))
            let chain = try [issued.certificatePEM, intermediate.certificatePEM, root.certificatePEM].map {
                try Certificate(pemEncoded: $0)
            }
            try await Self.withCheck(.any) { check in
                let problem = await check.problem(with: Self.rebuilt(chain), serverCertificate: [1])
                #expect(problem?.contains("has been revoked") == true, "\(String(describing: problem))")
            }
            #expect(ocsp.attempts(forKey: "ocsp") == 1)
        }
    }

    @Test func aChainEndingAtAnAnchorThatIsNotARootCannotBeChecked() async throws {
        let rootKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let intermediateKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let intermediate = try Self.certificate(
            "intermediate",
            issuer: ("root", rootKey),
            key: intermediateKey,
            ocsp: true
        )
        let leaf = try Self.certificate(
            "leaf",
            issuer: ("intermediate", intermediateKey),
            key: .init(P256.Signing.PrivateKey())
        )
        try await Self.withCheck(.any) { check in
            let problem = await check.problem(with: Self.rebuilt([leaf, intermediate]), serverCertificate: [1])
            #expect(problem?.contains("not self-signed") == true, "\(String(describing: problem))")
        }
    }

    @Test func certificatesNamingOnlyACRLPassABestAttemptAndFailARequiredAnswer() async throws {
        let rootKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let root = try Self.certificate("root", key: rootKey)
        let leaf = try Self.certificate(
            "leaf",
            issuer: ("root", rootKey),
            key: .init(P256.Signing.PrivateKey()),
            crl: true
        )
        let plain = try Self.certificate("plain", issuer: ("root", rootKey), key: .init(P256.Signing.PrivateKey()))
        try await Self.withCheck(.any) { check in
            #expect(await check.problem(with: Self.rebuilt([leaf, root]), serverCertificate: [1]) == nil)
        }
        try await Self.withCheck([.ocsp, .requirePositiveResponse]) { check in
            let problem = await check.problem(with: Self.rebuilt([leaf, root]), serverCertificate: [1])
            #expect(
                problem?.contains("names only a certificate revocation list") == true,
                "\(String(describing: problem))"
            )
            // Nothing named, nothing to ask.
            #expect(await check.problem(with: Self.rebuilt([plain, root]), serverCertificate: [3]) == nil)
        }
    }
}
