import Courier
import CourierTestServer
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

/// Reading certificates and keys, public-key pins, and how a ``ServerTrustManager`` picks an
/// evaluator: no network.
@Suite struct TLSCertificateTests {
    @Test func aCertificatesPinIsTheSHA256OfItsPublicKeyInfo() throws {
        let authority = try TestCertificateAuthority()
        let issued = try authority.issue()
        let certificate = try TLSCertificate(pemEncoded: issued.certificatePEM)
        // swift-certificates' own reading of the same certificate, hashed by swift-crypto.
        let parsed = try X509.Certificate(pemEncoded: issued.certificatePEM)
        var serializer = DER.Serializer()
        try serializer.serialize(parsed.publicKey)
        let expected = "sha256//" + Data(SHA256.hash(data: serializer.serializedBytes)).base64EncodedString()
        #expect(certificate.publicKeyPin == expected)
        #expect(Array(certificate.subjectPublicKeyInfo) == serializer.serializedBytes)
        // PEM out and in again, and DER in.
        #expect(try TLSCertificate(pemEncoded: certificate.pemEncoded) == certificate)
        #expect(try TLSCertificate(derEncoded: certificate.derEncoded) == certificate)
    }

    @Test func datesAndSelfIssuanceAreReadAsSwiftCertificatesReadsThem() throws {
        let authority = try TestCertificateAuthority()
        let now = Date()
        // Past 2049 too, where UTCTime gives way to GeneralizedTime.
        let ranges = [(now - 20 * 86_400)...(now - 10 * 86_400), (now + 86_400)...(now + 30 * 365 * 86_400)]
        for range in ranges {
            let issued = try authority.issue(validity: range)
            let certificate = try TLSCertificate(pemEncoded: issued.certificatePEM)
            let parsed = try X509.Certificate(pemEncoded: issued.certificatePEM)
            let validity = try #require(certificate.validity)
            #expect(validity.lowerBound == parsed.notValidBefore)
            #expect(validity.upperBound == parsed.notValidAfter)
            #expect(!certificate.isSelfIssued)
        }
        #expect(try TLSCertificate(pemEncoded: authority.certificatePEM).isSelfIssued)
    }

    @Test func aChainIsReadInOrderAndOtherBlocksAreSkipped() throws {
        let root = try TestCertificateAuthority()
        let intermediate = try root.intermediate()
        let issued = try intermediate.issue()
        let text = "comment line\n" + issued.privateKeyPEM + issued.chainPEM
        let chain = try TLSCertificate.certificates(pemEncoded: text)
        #expect(chain.count == 2)
        #expect(chain.first == (try TLSCertificate(pemEncoded: issued.certificatePEM)))
        #expect(chain.last == (try TLSCertificate(pemEncoded: intermediate.certificatePEM)))
        #expect(throws: CourierError.self) { try TLSCertificate(pemEncoded: issued.chainPEM) }
        let key = try TLSPrivateKey(pemEncoded: text)
        #expect(!key.description.contains(String(issued.privateKeyPEM.dropFirst(40).prefix(20))))
    }

    @Test func certificatesAndKeysAreReadFromPEMAndDERFiles() throws {
        let issued = try TestCertificateAuthority().issueClientCertificate()
        let certificate = try TLSCertificate(pemEncoded: issued.certificatePEM)
        let key = try TLSPrivateKey(pemEncoded: issued.privateKeyPEM)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-der-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = [
            ("cert.der", Data(certificate.derEncoded)), ("key.der", Data(key.derEncoded)),
            ("cert.pem", Data(issued.certificatePEM.utf8)),
            ("both.pem", Data((issued.certificatePEM + issued.privateKeyPEM).utf8)),
        ]
        for (name, data) in files { try data.write(to: directory.appendingPathComponent(name)) }
        let fromDER = try ClientCertificate(
            certificateFile: directory.appendingPathComponent("cert.der"),
            privateKeyFile: directory.appendingPathComponent("key.der")
        )
        let fromPEM = try ClientCertificate(certificateFile: directory.appendingPathComponent("both.pem"))
        #expect(fromDER == fromPEM)
        #expect(fromDER.certificateChain == [certificate])
        #expect(fromDER.privateKey == key)
        #expect(!String(describing: fromDER).contains(Data(key.derEncoded).base64EncodedString().prefix(12)))
        var dumped = ""
        dump(fromDER, to: &dumped)
        dump(key, to: &dumped)
        #expect(!dumped.contains("privateKey"), "\(dumped)")
        #expect(dumped.components(separatedBy: "derEncoded").count == 2, "only the certificate's bytes: \(dumped)")
        #expect(throws: CourierError.self) {
            try ClientCertificate(certificateFile: directory.appendingPathComponent("cert.pem"))
        }
    }

    @Test(arguments: [
        "", "not pem", "-----BEGIN CERTIFICATE-----\n", "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----",
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
        "-----BEGIN CERTIFICATE-----\nMAA=\n-----END KEY-----",
    ])
    func malformedTextIsAClearErrorNeverACrash(text: String) {
        #expect {
            try TLSCertificate.certificates(pemEncoded: text)
        } throws: { error in
            (error as? CourierError)?.kind == .invalidCertificate
        }
    }

    @Test func truncatedCertificatesAreRefusedAtEveryLength() throws {
        let certificate = try TLSCertificate(pemEncoded: TestCertificateAuthority().certificatePEM)
        for length in 0..<certificate.derEncoded.count {
            #expect(throws: CourierError.self) {
                try TLSCertificate(derEncoded: Array(certificate.derEncoded.prefix(length)))
            }
        }
    }

    @Test func theManagerMatchesExactHostsThenOneLabelWildcards() throws {
        let manager = ServerTrustManager(evaluators: [
            "API.example.org": DisabledTrustEvaluator(),
            "*.example.org": DefaultTrustEvaluator(),
        ])
        #expect(try manager.serverTrustEvaluator(forHost: "api.example.org.") is DisabledTrustEvaluator)
        #expect(try manager.serverTrustEvaluator(forHost: "www.Example.org") is DefaultTrustEvaluator)
        for host in ["example.org", "a.b.example.org", "example.org.evil"] {
            #expect {
                try manager.serverTrustEvaluator(forHost: host)
            } throws: { error in
                guard case .noRequiredEvaluator(let refused) = (error as? CourierError)?.serverTrustFailureReason
                else { return false }
                return refused == host
            }
        }
        let lenient = ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:])
        #expect(try lenient.serverTrustEvaluator(forHost: "example.org") == nil)
    }

    @Test func pinsMatchWithOrWithoutTheirPrefixAndNameWhatWasSeen() throws {
        let certificate = try TLSCertificate(pemEncoded: TestCertificateAuthority().certificatePEM)
        let trust = ServerTrust(host: "example.org", certificates: [certificate])
        let bare = String(certificate.publicKeyPin.dropFirst("sha256//".count))
        try PublicKeysTrustEvaluator(pins: [bare]).evaluate(trust)
        try PublicKeysTrustEvaluator(pins: [certificate.publicKeyPin]).evaluate(trust)
        try PinnedCertificatesTrustEvaluator(certificates: [certificate]).evaluate(trust)
        let error = try #require(throws: CourierError.self) {
            try CompositeTrustEvaluator(evaluators: [
                DefaultTrustEvaluator(), PublicKeysTrustEvaluator(pins: ["sha256//AAAA"]),
            ]).evaluate(trust)
        }
        guard case .publicKeyPinningFailed(let host, let seen) = error.serverTrustFailureReason else {
            Issue.record("got \(error)")
            return
        }
        #expect(host == "example.org")
        #expect(seen == [certificate.publicKeyPin])
        #expect(error.localizedDescription.contains(certificate.publicKeyPin))
    }
}
