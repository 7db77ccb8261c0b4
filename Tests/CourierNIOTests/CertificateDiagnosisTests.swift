import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import CourierNIO

/// What a refused chain's diagnosis says of certificates no test authority issues: no socket.
@Suite struct CertificateDiagnosisTests {
    private static func selfSigned(_ name: String, extensions: Certificate.Extensions = .init()) throws -> Certificate {
        try MadeCertificate.make(name, extensions: extensions)
    }

    /// A server chooses the names in its certificates: control characters never reach a message,
    /// and a long name is cut.
    @Test func namesAreCleanedAndCut() throws {
        let evil = try DistinguishedName {
            CommonName("evil\r\nSet-Cookie: x=1\u{1B}[31m" + String(repeating: "a", count: 500))
        }
        let name = CertificateDiagnosis.name(evil)
        #expect(!name.contains("\r") && !name.contains("\n") && !name.contains("\u{1B}"))
        #expect(name.count <= 201)
        #expect(name.hasPrefix("CN=evil??Set-Cookie"))
    }

    @Test func aCriticalExtensionNoCheckUnderstandsIsNamed() async throws {
        var extensions = Certificate.Extensions()
        try extensions.append(Certificate.Extension(oid: [1, 2, 3, 4], critical: true, value: [0x05, 0x00]))
        let certificate = try Self.selfSigned("odd", extensions: extensions)
        let problem = await CertificateDiagnosis.describe([certificate], roots: CertificateStore(), now: Date())
        #expect(problem.contains("CN=odd has a critical extension no check here understands (1.2.3.4)"), "\(problem)")
    }

    @Test func aSelfSignedCertificateAndUnknownRootsAreToldApart() async throws {
        let certificate = try Self.selfSigned("lonely")
        let problem = await CertificateDiagnosis.describe([certificate], roots: CertificateStore(), now: Date())
        #expect(problem.contains("self-signed"), "\(problem)")
        // Where the roots cannot be read (the system's on Apple platforms), nothing is said of them.
        let other = try Self.selfSigned("issuer")
        let unknown = await CertificateDiagnosis.describe(
            [other],
            roots: CertificateStore(),
            knowsRoots: false,
            now: Date()
        )
        #expect(unknown.contains("self-signed"))
    }
}
