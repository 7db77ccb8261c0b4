import Crypto
import Foundation
import X509

/// Certificates no test authority would issue, made by hand for the trust code's unit tests.
enum MadeCertificate {
    /// A certificate for `subject` with `key`, issued by `issuer` (itself when `nil`), valid from a
    /// day ago for a day, with `extensions`.
    static func make(
        _ subject: String,
        key: Certificate.PrivateKey = Certificate.PrivateKey(P256.Signing.PrivateKey()),
        issuer: (name: String, key: Certificate.PrivateKey)? = nil,
        extensions: Certificate.Extensions = Certificate.Extensions()
    ) throws -> Certificate {
        let name = try DistinguishedName { CommonName(subject) }
        let issuerName = try issuer.map { issuer in try DistinguishedName { CommonName(issuer.name) } } ?? name
        let now = Date()
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: now - 86_400,
            notValidAfter: now + 86_400,
            issuer: issuerName,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: issuer?.key ?? key
        )
    }
}
