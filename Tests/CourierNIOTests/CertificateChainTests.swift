import Courier
import CourierTestServer
import Foundation
import NIOSSL
import Testing

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
        // Roots from a file, and from a folder of files, as BoringSSL reads them.
        try await withTemporaryFolder { folder in
            let file = folder.appendingPathComponent("root.pem")
            try Data(fixture.root.certificatePEM.utf8).write(to: file)
            for path in [file.path, folder.path] {
                tls.trustRoots = .file(path)
                let fromFile = await CertificateChain(tls: tls).chain(
                    from: try fixture.leaf,
                    presented: try fixture.presented
                )
                #expect(fromFile == (try fixture.expected), "\(path)")
            }
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

    private func withTemporaryFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-chain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }
}
