import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority made on the fly, for tests of a client's TLS checks: it issues
/// server certificates (valid, expired, for another name) and client certificates, each with a
/// new key, as PEM that ``TestServer/TLS`` and a client's trust settings take.
///
/// **For tests only**: its keys live in memory for the test's run and nothing outside the test
/// trusts it.
///
/// ```swift
/// let authority = try TestCertificateAuthority()
/// let server = try authority.issue(names: ["localhost"], ipAddresses: ["127.0.0.1"])
/// var configuration = TestServer.Configuration()
/// configuration.tls = TestServer.TLS(certificateChain: server.chainPEM, privateKey: server.privateKeyPEM)
/// ```
public struct TestCertificateAuthority: Sendable {
    /// A certificate the authority issued, with its key.
    public struct Issued: Sendable {
        /// The certificate, PEM.
        public let certificatePEM: String
        /// The certificate then the authority's (and an intermediate's, if it came through one), PEM.
        public let chainPEM: String
        /// The certificate's private key, PEM (PKCS #8).
        public let privateKeyPEM: String
    }

    /// The authority's certificate, PEM: what a client adds to its trust roots.
    public let certificatePEM: String
    let certificate: Certificate
    let key: Certificate.PrivateKey
    /// The PEM of the certificates between this authority and its root, this one first; empty
    /// for a root.
    private let chainAbovePEM: String

    /// A new root authority named `name`, valid from a day ago for ten years.
    public init(name: String = "Courier Test CA") throws {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let subject = try DistinguishedName { CommonName(name) }
        let certificate = try Self.sign(
            subject: subject,
            key: key.publicKey,
            validity: Self.fromYesterday(years: 10),
            issuer: subject,
            issuerKey: key,
            extensions: Self.authorityExtensions(maxPathLength: nil)
        )
        self.init(certificate: certificate, key: key, chainAbovePEM: "")
    }

    private init(certificate: Certificate, key: Certificate.PrivateKey, chainAbovePEM: String) {
        self.certificate = certificate
        self.key = key
        self.chainAbovePEM = chainAbovePEM
        certificatePEM = (try? certificate.serializeAsPEM().pemString).map { $0 + "\n" } ?? ""
    }

    /// An intermediate authority signed by this one: its certificates then carry it in their chain.
    /// Its certificate is valid over `validity` (by default from a day ago for five years; give a
    /// past range for an expired one), and names `ocspResponder`, if given, as where to ask
    /// whether it was revoked.
    public func intermediate(
        name: String = "Courier Test Intermediate CA",
        validity: ClosedRange<Date>? = nil,
        ocspResponder: URL? = nil
    ) throws -> TestCertificateAuthority {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let issued = try Self.sign(
            subject: try DistinguishedName { CommonName(name) },
            key: key.publicKey,
            validity: validity ?? Self.fromYesterday(years: 5),
            issuer: certificate.subject,
            issuerKey: self.key,
            extensions: Self.authorityExtensions(maxPathLength: 0, ocspResponder: ocspResponder)
        )
        let issuedPEM = try issued.serializeAsPEM().pemString + "\n"
        return TestCertificateAuthority(certificate: issued, key: key, chainAbovePEM: issuedPEM + chainAbovePEM)
    }

    /// A server certificate for `names` and `ipAddresses` (IPv4 dotted or IPv6), valid over
    /// `validity` (by default from a day ago for a year; give a past range for an expired one).
    /// With `ocspResponder`, the certificate names it as where to ask whether it was revoked
    /// (see ``OCSPResponder``).
    public func issue(
        names: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1"],
        validity: ClosedRange<Date>? = nil,
        ocspResponder: URL? = nil
    ) throws -> Issued {
        try issue(
            commonName: names.first ?? ipAddresses.first ?? "server",
            alternativeNames: names.map { .dnsName($0) } + ipAddresses.compactMap(Self.ipAddressName),
            usage: .serverAuth,
            validity: validity,
            ocspResponder: ocspResponder
        )
    }

    /// A client certificate for `name`, for mutual TLS.
    public func issueClientCertificate(name: String = "Courier Test Client") throws -> Issued {
        try issue(commonName: name, alternativeNames: [], usage: .clientAuth, validity: nil, ocspResponder: nil)
    }

    private func issue(
        commonName: String,
        alternativeNames: [GeneralName],
        usage: ExtendedKeyUsage.Usage,
        validity: ClosedRange<Date>?,
        ocspResponder: URL?
    ) throws -> Issued {
        let key = P256.Signing.PrivateKey()
        let certificate = try Self.sign(
            subject: try DistinguishedName { CommonName(commonName) },
            key: Certificate.PublicKey(key.publicKey),
            validity: validity ?? Self.fromYesterday(years: 1),
            issuer: self.certificate.subject,
            issuerKey: self.key,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([usage])
                if !alternativeNames.isEmpty { SubjectAlternativeNames(alternativeNames) }
                if let ocspResponder {
                    AuthorityInformationAccess([
                        .init(method: .ocspServer, location: .uniformResourceIdentifier(ocspResponder.absoluteString))
                    ])
                }
            }
        )
        let pem = try certificate.serializeAsPEM().pemString + "\n"
        return Issued(
            certificatePEM: pem,
            chainPEM: pem + chainAbovePEM,
            privateKeyPEM: key.pemRepresentation + "\n"
        )
    }

    /// From a day ago (so that clocks a little apart agree) for `years`.
    private static func fromYesterday(years: Double) -> ClosedRange<Date> {
        let now = Date()
        return (now - 86_400)...(now + years * 365 * 86_400)
    }

    private static func authorityExtensions(
        maxPathLength: Int?,
        ocspResponder: URL? = nil
    ) throws
        -> Certificate.Extensions
    {
        try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: maxPathLength))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            if let ocspResponder {
                AuthorityInformationAccess([
                    .init(method: .ocspServer, location: .uniformResourceIdentifier(ocspResponder.absoluteString))
                ])
            }
        }
    }

    private static func sign(
        subject: DistinguishedName,
        key: Certificate.PublicKey,
        validity: ClosedRange<Date>,
        issuer: DistinguishedName,
        issuerKey: Certificate.PrivateKey,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key,
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: issuerKey
        )
    }

    private static func ipAddressName(_ address: String) -> GeneralName? {
        var bytes: [UInt8] = []
        if address.contains(":") {
            var storage = in6_addr()
            guard inet_pton(AF_INET6, address, &storage) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &storage) { Array($0) }
        } else {
            var storage = in_addr()
            guard inet_pton(AF_INET, address, &storage) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &storage) { Array($0) }
        }
        return .ipAddress(ASN1OctetString(contentBytes: bytes[...]))
    }
}
