import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import CourierTestServer

/// `POST /ocsp` answers for the configured responder's authority, each answer signed by it.
@Suite struct OCSPRouteTests {
    /// A DER `OCSPRequest` for `certificate` under `issuer`, with SHA-1 hashes (as
    /// swift-certificates asks): `SEQUENCE { SEQUENCE { SEQUENCE { SEQUENCE { CertID } } } }`.
    private static func request(for certificate: Certificate, issuer: Certificate) throws -> [UInt8] {
        var name = DER.Serializer()
        try name.serialize(issuer.subject)
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { request in
            try request.appendConstructedNode(identifier: .sequence) { tbs in
                try tbs.appendConstructedNode(identifier: .sequence) { list in
                    try list.appendConstructedNode(identifier: .sequence) { single in
                        try single.appendConstructedNode(identifier: .sequence) { id in
                            try id.appendConstructedNode(identifier: .sequence) {
                                try $0.serialize(ASN1ObjectIdentifier(arrayLiteral: 1, 3, 14, 3, 2, 26))
                            }
                            try id.serialize(
                                ASN1OctetString(
                                    contentBytes: ArraySlice(Insecure.SHA1.hash(data: name.serializedBytes))
                                )
                            )
                            try id.serialize(
                                ASN1OctetString(
                                    contentBytes: ArraySlice(
                                        Insecure.SHA1.hash(data: Array(issuer.publicKey.subjectPublicKeyInfoBytes))
                                    )
                                )
                            )
                            id.appendPrimitiveNode(identifier: .integer) {
                                $0.append(contentsOf: certificate.serialNumber.bytes)
                            }
                        }
                    }
                }
            }
        }
        return serializer.serializedBytes
    }

    /// The certificate status an answer gives (its tag: 0 good, 1 revoked, 2 unknown), after
    /// checking the response's shape and that `signer` signed it.
    private static func status(in response: [UInt8], signedBy signer: Certificate) throws -> UInt? {
        let root = try DER.parse(response)
        guard case .constructed(let top) = root.content else { return nil }
        let parts = Array(top)
        guard parts.count == 2, case .primitive(let status) = parts[0].content, status == [0],
            case .constructed(let wrapped) = parts[1].content,
            let bytes = wrapped.first(where: { _ in true }), case .constructed(let typeAndBody) = bytes.content
        else { return nil }
        let typeAndBodyParts = Array(typeAndBody)
        guard try ASN1ObjectIdentifier(derEncoded: typeAndBodyParts[0]) == [1, 3, 6, 1, 5, 5, 7, 48, 1, 1] else {
            return nil
        }
        let basic = try DER.parse(try ASN1OctetString(derEncoded: typeAndBodyParts[1]).bytes)
        guard case .constructed(let basicParts) = basic.content else { return nil }
        let basicFields = Array(basicParts)
        let signature = try ASN1BitString(derEncoded: basicFields[2])
        let valid = signer.publicKey.isValidSignature(
            Array(signature.bytes),
            for: Array(basicFields[0].encodedBytes),
            signatureAlgorithm: .ecdsaWithSHA256
        )
        #expect(valid, "the authority signed the answer")
        guard case .constructed(let dataParts) = basicFields[0].content,
            let responses = Array(dataParts).dropFirst(2).first, case .constructed(let list) = responses.content,
            let single = list.first(where: { _ in true }), case .constructed(let singleParts) = single.content
        else { return nil }
        return Array(singleParts)[1].identifier.tagNumber
    }

    @Test func answersGoodRevokedAndUnknownSignedByTheAuthority() async throws {
        let authority = try TestCertificateAuthority()
        let responder = TestCertificateAuthority.OCSPResponder(authority: authority)
        let issuer = try Certificate(pemEncoded: authority.certificatePEM)
        let good = try Certificate(pemEncoded: authority.issue().certificatePEM)
        let revokedIssued = try authority.issue()
        try responder.revoke(revokedIssued)
        let revoked = try Certificate(pemEncoded: revokedIssued.certificatePEM)
        let stranger = try TestCertificateAuthority(name: "Stranger CA")
        let strangers = try Certificate(pemEncoded: stranger.issue().certificatePEM)
        try await TestServer.withRunningServer(configuration: .init { $0.ocspResponder = responder }) { server in
            func ask(_ body: [UInt8]) async throws -> Exchange {
                try await Exchange.make(
                    server.baseURL,
                    "/ocsp",
                    method: .POST,
                    headers: [("Content-Type", "application/ocsp-request")],
                    body: body
                )
            }
            for (certificate, certificateIssuer, expected) in [
                (good, issuer, UInt(0)), (revoked, issuer, 1),
                (strangers, try Certificate(pemEncoded: stranger.certificatePEM), 2),
            ] {
                let answer = try await ask(Self.request(for: certificate, issuer: certificateIssuer))
                #expect(answer.status == 200)
                #expect(answer.headers["Content-Type"] == ["application/ocsp-response"])
                #expect(try Self.status(in: answer.body, signedBy: issuer) == expected)
            }
            #expect(server.attempts(forKey: "ocsp") == 3)
            #expect(try await ask(Array("not DER".utf8)).status == 400)
        }
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(server.baseURL, "/ocsp", method: .POST, body: [0x30, 0])
            #expect(answer.status == 404)
        }
    }
}
