import Courier
import CourierTestServer
import CourierTestSupport
import Crypto
import Foundation
import NIOSSL
import Testing
import X509

@testable import CourierNIO

/// Rebuilding the chain a server's certificate was accepted through, from certificates made for
/// each test: no socket.
@Suite struct CertificateChainTests {
    /// A root, an intermediate under it, a server certificate from the intermediate, and the
    /// certificates as the TLS stack and Courier read them.
    private struct Fixture {
        let root: TestCertificateAuthority
        let intermediate: TestCertificateAuthority
        let server: TestCertificateAuthority.Issued

        init() throws {
            root = try TestCertificateAuthority()
            intermediate = try root.intermediate()
            server = try intermediate.issue()
        }

        var leaf: TLSCertificate { get throws { try TLSCertificate(pemEncoded: server.certificatePEM) } }
        var expected: [TLSCertificate] {
            get throws {
                try [
                    leaf, TLSCertificate(pemEncoded: intermediate.certificatePEM),
                    TLSCertificate(pemEncoded: root.certificatePEM),
                ]
            }
        }
        /// What the server presents: its certificate and the intermediate.
        var presented: [NIOSSLCertificate] {
            get throws { try NIOSSLCertificate.fromPEMBytes(Array(server.chainPEM.utf8)) }
        }
        var rootForTLS: NIOSSLCertificate {
            get throws { try NIOSSLCertificate(bytes: Array(root.certificatePEM.utf8), format: .pem) }
        }
    }

    @Test func theChainLeadsThroughThePresentedCertificatesToTheHandshakesRoots() async throws {
        let fixture = try Fixture()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try fixture.rootForTLS])
        let chain = await CertificateChain(tls: tls).chain(from: try fixture.leaf, presented: try fixture.presented)
        #expect(chain == (try fixture.expected))
        // Roots from a file, and from a folder's files named as `c_rehash` names them, the only
        // ones BoringSSL reads there.
        try await withTemporaryFolder { folder in
            let file = folder.appendingPathComponent("0badcafe.0")
            try Data(fixture.root.certificatePEM.utf8).write(to: file)
            for path in [file.path, folder.path] {
                tls.trustRoots = .file(path)
                let fromFile = await CertificateChain(tls: tls).chain(
                    from: try fixture.leaf,
                    presented: try fixture.presented
                )
                #expect(fromFile == (try fixture.expected), "\(path)")
            }
            try FileManager.default.moveItem(at: file, to: folder.appendingPathComponent("root.pem"))
            let unhashed = await CertificateChain(tls: tls).chain(
                from: try fixture.leaf,
                presented: try fixture.presented
            )
            #expect(unhashed == [try fixture.leaf])
        }
        // An additional root counts as well.
        tls.trustRoots = .certificates([])
        tls.additionalTrustRoots = [.certificates([try fixture.rootForTLS])]
        let additional = await CertificateChain(tls: tls).chain(
            from: try fixture.leaf,
            presented: try fixture.presented
        )
        #expect(additional == (try fixture.expected))
    }

    @Test func withoutTheRootOrTheIntermediateThereIsNoChainBeyondTheCertificate() async throws {
        let fixture = try Fixture()
        let stranger = try NIOSSLCertificate(bytes: Array(TestCertificateAuthority().certificatePEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([stranger])
        let unknownRoot = await CertificateChain(tls: tls).chain(
            from: try fixture.leaf,
            presented: try fixture.presented
        )
        #expect(unknownRoot == [try fixture.leaf])
        tls.trustRoots = .certificates([try fixture.rootForTLS])
        let noIntermediate = await CertificateChain(tls: tls).chain(from: try fixture.leaf, presented: [])
        #expect(noIntermediate == [try fixture.leaf])
    }

    /// A handshake that checked no chain: each certificate whose key signed the one before,
    /// whatever the order they came in, and nothing that merely carries the right name.
    @Test func anUncheckedChainIsLinkedBySignatures() async throws {
        let fixture = try Fixture()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let chain = CertificateChain(tls: tls)
        #expect(chain.roots == nil)
        let sameName = try TestCertificateAuthority(name: "Courier Test Intermediate CA")
        let presented =
            try NIOSSLCertificate.fromPEMBytes(Array((sameName.certificatePEM + fixture.root.certificatePEM).utf8))
            + (try fixture.presented)
        #expect(await chain.chain(from: try fixture.leaf, presented: presented) == (try fixture.expected))
        #expect(await chain.chain(from: try fixture.leaf, presented: Array(presented.prefix(2))) == [try fixture.leaf])
    }

    @Test func hashedNamesAreEightHexDigitsADotAndANumber() {
        for name in ["0badcafe.0", "5ad8a5d6.12", "ABCDEF01.1"] {
            #expect(CertificateChain.isHashedName(name), "\(name)")
        }
        for name in ["root.pem", "0badcafe", "0badcafe.", "0badcaf.0", "0badcafe.0.pem", "0badcafg.0", ".0"] {
            #expect(!CertificateChain.isHashedName(name), "\(name)")
        }
    }

    /// A certificate under the intermediate's name carrying the intermediate's key (so it passes
    /// for the server's issuer), signed by a key of the server's own, above which sit fifteen
    /// certificates under one name and that key, each differing in its alternative names: every
    /// one of them signs every other, and a search that tried them in every order would not end.
    @Test func certificatesThatSignEachOtherDoNotMakeTheSearchExplode() async throws {
        let fixture = try Fixture()
        let intermediate = try Certificate(pemEncoded: fixture.intermediate.certificatePEM)
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let name = try DistinguishedName { CommonName("Loop") }
        let now = Date()
        func certificate(
            subject: DistinguishedName,
            key publicKey: Certificate.PublicKey,
            alternative: String
        )
            throws -> NIOSSLCertificate
        {
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: publicKey,
                notValidBefore: now - 86_400,
                notValidAfter: now + 86_400,
                issuer: name,
                subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    SubjectAlternativeNames([.dnsName(alternative)])
                },
                issuerPrivateKey: key
            )
            return try NIOSSLCertificate(bytes: Array(certificate.serializeAsPEM().pemString.utf8), format: .pem)
        }
        let impostor = try certificate(
            subject: intermediate.subject,
            key: intermediate.publicKey,
            alternative: "impostor"
        )
        let loop = try (0..<15).map { try certificate(subject: name, key: key.publicKey, alternative: "\($0).loop") }
        let presented = [try fixture.presented[0], impostor] + loop
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try fixture.rootForTLS])
        let leaf = try fixture.leaf
        let builder = CertificateChain(tls: tls)
        let chain = await value(within: hangLimit) {
            await builder.chain(from: leaf, presented: presented)
        }
        #expect(chain == [leaf])
    }

    private func withTemporaryFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-chain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }
}
