import Crypto
import Foundation
import NIOConcurrencyHelpers
import SwiftASN1
import X509

extension TestCertificateAuthority {
    /// An OCSP responder (RFC 6960) for the certificates an authority issues, for tests of a
    /// client's revocation checks: set it as ``TestServer/Configuration/ocspResponder`` and the
    /// server answers `POST /ocsp`; issue certificates with `ocspResponder:` pointing there.
    ///
    /// It answers `good` for every certificate of its authority that it has not been told to
    /// ``revoke(_:)``, signed by the authority itself, valid for a day; `unknown` for another
    /// authority's. Each answer counts under the key `ocsp` (``TestServer/attempts(forKey:)``).
    ///
    /// ```swift
    /// let authority = try TestCertificateAuthority()
    /// let responder = TestCertificateAuthority.OCSPResponder(authority: authority)
    /// try await TestServer.withRunningServer(configuration: .init { $0.ocspResponder = responder }) { ocsp in
    ///     let server = try authority.issue(ocspResponder: ocsp.url("/ocsp"))
    ///     try responder.revoke(server)
    ///     // ... a TLS server presenting `server`, and a client checking revocation ...
    /// }
    /// ```
    public final class OCSPResponder: Sendable {
        private let authority: TestCertificateAuthority
        /// The serial numbers revoked, as their DER integer contents.
        private let revoked = NIOLockedValueBox(Set<[UInt8]>())

        /// A responder for `authority`'s certificates.
        public init(authority: TestCertificateAuthority) {
            self.authority = authority
        }

        /// From now on, answers that `issued` is revoked (since a minute ago, key compromised).
        public func revoke(_ issued: Issued) throws {
            try revoke(certificatePEM: issued.certificatePEM)
        }

        /// From now on, answers that `authority`'s certificate (an intermediate this one issued)
        /// is revoked.
        public func revoke(authority: TestCertificateAuthority) throws {
            try revoke(certificatePEM: authority.certificatePEM)
        }

        private func revoke(certificatePEM: String) throws {
            let certificate = try Certificate(pemEncoded: certificatePEM)
            revoked.withLockedValue { _ = $0.insert(Self.magnitude(certificate.serialNumber.bytes)) }
        }

        /// The DER `OCSPResponse` to a DER `OCSPRequest` (its first certificate), or `nil` when
        /// the request cannot be read.
        func response(to request: [UInt8], now: Date = Date()) -> [UInt8]? {
            guard let certificateID = Self.firstCertificateID(in: request) else { return nil }
            let status: CertificateStatus
            if certificateID.issuerKeyHash != authority.publicKeyHash(algorithm: certificateID.hashAlgorithm) {
                status = .unknown
            } else if revoked.withLockedValue({ $0.contains(Self.magnitude(certificateID.serialNumber[...])) }) {
                status = .revoked(since: now - 60)
            } else {
                status = .good
            }
            return try? authority.signedResponse(for: certificateID, status: status, now: now)
        }

        /// A serial number's bytes without the leading zeros a DER integer may carry.
        private static func magnitude(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            Array(bytes.drop { $0 == 0 })
        }

        /// What a request asks about: the `CertID` as sent (to answer it byte for byte), the
        /// hash algorithm and key hash it names, and the serial number.
        struct CertificateID {
            let encoded: ASN1Node
            let hashAlgorithm: ASN1ObjectIdentifier
            let issuerKeyHash: [UInt8]
            let serialNumber: [UInt8]
        }

        /// The first `CertID` of a request: `OCSPRequest ::= SEQUENCE { tbsRequest SEQUENCE {
        /// [0] version?, [1] requestorName?, requestList SEQUENCE OF SEQUENCE { reqCert CertID, … }, … }, … }`.
        static func firstCertificateID(in request: [UInt8]) -> CertificateID? {
            guard let root = try? DER.parse(request),
                case .constructed(let top) = root.content,
                let tbs = top.first(where: { _ in true }),
                case .constructed(let tbsParts) = tbs.content,
                let list = tbsParts.first(where: { $0.identifier == .sequence }),
                case .constructed(let requests) = list.content,
                let first = requests.first(where: { _ in true }),
                case .constructed(let requestParts) = first.content,
                let certificateID = requestParts.first(where: { _ in true }),
                case .constructed(let fields) = certificateID.content
            else { return nil }
            let parts = Array(fields)
            guard parts.count == 4,
                case .constructed(let algorithm) = parts[0].content,
                let oid = algorithm.first(where: { _ in true }),
                let hashAlgorithm = try? ASN1ObjectIdentifier(derEncoded: oid),
                case .primitive(let keyHash) = parts[2].content,
                case .primitive(let serial) = parts[3].content
            else { return nil }
            return CertificateID(
                encoded: certificateID,
                hashAlgorithm: hashAlgorithm,
                issuerKeyHash: Array(keyHash),
                serialNumber: Array(serial)
            )
        }
    }

    /// What a responder says of one certificate.
    enum CertificateStatus {
        case good
        case revoked(since: Date)
        case unknown
    }

    /// The hash of the authority's `subjectPublicKey` (the key's bits, as a `CertID` names an
    /// issuer) under `algorithm` (SHA-1 or SHA-256), or empty for another algorithm.
    func publicKeyHash(algorithm: ASN1ObjectIdentifier) -> [UInt8] {
        let key = Array(certificate.publicKey.subjectPublicKeyInfoBytes)
        switch algorithm {
        case Self.sha1: return Array(Insecure.SHA1.hash(data: key))
        case Self.sha256: return Array(SHA256.hash(data: key))
        default: return []
        }
    }

    private static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    private static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    private static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]
    private static let basicResponse: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]

    /// A successful `OCSPResponse` whose `BasicOCSPResponse` the authority signed, naming itself
    /// as the responder, valid from a minute ago for a day.
    func signedResponse(
        for certificateID: OCSPResponder.CertificateID,
        status: CertificateStatus,
        now: Date
    ) throws
        -> [UInt8]
    {
        // ResponseData ::= SEQUENCE { responderID [1] Name, producedAt, responses SEQUENCE OF SingleResponse }
        var data = DER.Serializer()
        try data.appendConstructedNode(identifier: .sequence) { data in
            try data.serialize(certificate.subject, explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific)
            try data.serialize(Self.generalizedTime(now - 60))
            try data.appendConstructedNode(identifier: .sequence) { responses in
                try responses.appendConstructedNode(identifier: .sequence) { single in
                    single.serialize(certificateID.encoded)
                    switch status {
                    case .good:
                        single.appendPrimitiveNode(
                            identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
                        ) {
                            _ in
                        }
                    case .revoked(let since):
                        try single.appendConstructedNode(
                            identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)
                        ) { revoked in
                            try revoked.serialize(Self.generalizedTime(since))
                            // CRLReason keyCompromise (1).
                            revoked.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) {
                                $0.appendPrimitiveNode(identifier: .enumerated) { $0.append(1) }
                            }
                        }
                    case .unknown:
                        single.appendPrimitiveNode(
                            identifier: ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific)
                        ) {
                            _ in
                        }
                    }
                    try single.serialize(Self.generalizedTime(now - 60))
                    try single.serialize(
                        Self.generalizedTime(now + 86_400),
                        explicitlyTaggedWithTagNumber: 0,
                        tagClass: .contextSpecific
                    )
                }
            }
        }
        let signature = try key.sign(bytes: data.serializedBytes, signatureAlgorithm: .ecdsaWithSHA256)
        // BasicOCSPResponse ::= SEQUENCE { tbsResponseData, signatureAlgorithm, signature BIT STRING }
        var basic = DER.Serializer()
        try basic.appendConstructedNode(identifier: .sequence) { basic in
            basic.serializeRawBytes(data.serializedBytes)
            try basic.appendConstructedNode(identifier: .sequence) { try $0.serialize(Self.ecdsaWithSHA256) }
            try basic.serialize(ASN1BitString(bytes: signature.rawRepresentation[...]))
        }
        // OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED successful, [0] ResponseBytes }
        var response = DER.Serializer()
        try response.appendConstructedNode(identifier: .sequence) { response in
            response.appendPrimitiveNode(identifier: .enumerated) { $0.append(0) }
            try response.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { bytes in
                try bytes.appendConstructedNode(identifier: .sequence) { bytes in
                    try bytes.serialize(Self.basicResponse)
                    try bytes.serialize(ASN1OctetString(contentBytes: basic.serializedBytes[...]))
                }
            }
        }
        return response.serializedBytes
    }

    private static func generalizedTime(_ date: Date) throws -> GeneralizedTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return try GeneralizedTime(
            year: parts.year ?? 1970,
            month: parts.month ?? 1,
            day: parts.day ?? 1,
            hours: parts.hour ?? 0,
            minutes: parts.minute ?? 0,
            seconds: parts.second ?? 0,
            fractionalSeconds: 0
        )
    }
}
