import Courier
import CourierTestServer
import Foundation
import Testing

/// `--cacert`, `--cert`/`--key`, `--pinnedpubkey` and `--insecure`, through the built binary,
/// against the test server in TLS mode with certificates made for the test.
@Suite struct TLSOptionsCommandTests {
    /// Writes `text` to a new file in a private directory and returns its path.
    private static func write(_ text: String, named name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test func caCertificatesPinsClientCertificatesAndInsecure() async throws {
        let authority = try TestCertificateAuthority()
        let server = try authority.issue()
        let client = try authority.issueClientCertificate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-tls-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ca = try Self.write(authority.certificatePEM, named: "ca.pem", in: directory)
        let cert = try Self.write(client.certificatePEM, named: "client.pem", in: directory)
        let key = try Self.write(client.privateKeyPEM, named: "client-key.pem", in: directory)
        let pin = try TLSCertificate(pemEncoded: server.certificatePEM).publicKeyPin
        let caPin = try TLSCertificate(pemEncoded: authority.certificatePEM).publicKeyPin
        let otherPin = try TLSCertificate(pemEncoded: TestCertificateAuthority(name: "Other CA").certificatePEM)
            .publicKeyPin

        let tls = TestServer.TLS(
            certificateChain: server.chainPEM,
            privateKey: server.privateKeyPEM,
            requiredClientCertificateIssuers: authority.certificatePEM
        )
        try await TestServer.withRunningServer(configuration: TestServer.Configuration { $0.tls = tls }) { server in
            let url = server.url("/get").absoluteString
            let trusted = try await CourierRun.run([
                "--check-status", "--cacert", ca, "--cert", cert, "--key", key, url,
            ])
            #expect(trusted.status == 0, "\(trusted.errorOutput)")

            let pinned = try await CourierRun.run([
                "--check-status", "--cacert", ca, "--cert", cert, "--key", key, "--pinnedpubkey", "\(otherPin);\(pin)",
                url,
            ])
            #expect(pinned.status == 0, "\(pinned.errorOutput)")

            // Unlike curl, which looks at the server's key only, a pin may name the CA's.
            let pinnedCA = try await CourierRun.run([
                "--check-status", "--cacert", ca, "--cert", cert, "--key", key, "--pinnedpubkey", caPin, url,
            ])
            #expect(pinnedCA.status == 0, "\(pinnedCA.errorOutput)")

            let wrongPin = try await CourierRun.run([
                "--cacert", ca, "--cert", cert, "--key", key, "--pinnedpubkey", otherPin, url,
            ])
            #expect(wrongPin.status != 0)
            #expect(wrongPin.errorOutput.contains("no pinned public key"), "\(wrongPin.errorOutput)")
            #expect(wrongPin.errorOutput.contains(pin), "the pin seen is named")

            let untrusted = try await CourierRun.run(["--cert", cert, "--key", key, url])
            #expect(untrusted.status != 0)

            let insecure = try await CourierRun.run(["--check-status", "-k", "--cert", cert, "--key", key, url])
            #expect(insecure.status == 0, "\(insecure.errorOutput)")
            #expect(insecure.errorOutput.contains("warning: --insecure"))
        }

        let badPin = try await CourierRun.run(["--pinnedpubkey", "md5//abc", "https://127.0.0.1:1/"])
        #expect(badPin.status == 2)
        #expect(badPin.errorOutput.contains("--pinnedpubkey takes sha256//"))
        let missing = try await CourierRun.run([
            "--cacert", directory.appendingPathComponent("none.pem").path, "https://127.0.0.1:1/",
        ])
        #expect(missing.status == 2)
        #expect(missing.errorOutput.contains("none.pem could not be read"), "\(missing.errorOutput)")
    }
}
