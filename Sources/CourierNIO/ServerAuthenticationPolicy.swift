import SwiftASN1
import X509

/// What BoringSSL's TLS-server purpose checks beyond RFC 5280, so that a chain Courier rebuilds
/// (`CertificateChain`) is one the handshake would accept: a certificate below the trust anchor
/// that names its uses (extended key usage) must allow server authentication (BoringSSL does not
/// ask it of the anchor). It also takes on a critical
/// subject-alternative-name extension, which the handshake's host check has read already (some
/// certificates have no subject and mark it critical).
struct ServerAuthenticationPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.extendedKeyUsage,
        .X509ExtensionID.subjectAlternativeName,
    ]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for certificate in chain.dropLast() {
            let usage: ExtendedKeyUsage?
            do {
                usage = try certificate.extensions.extendedKeyUsage
            } catch {
                return .failsToMeetPolicy(reason: "an extended key usage that cannot be read")
            }
            if let usage, !usage.contains(.serverAuth), !usage.contains(.any) {
                return .failsToMeetPolicy(
                    reason: "a certificate whose extended key usage excludes server authentication"
                )
            }
        }
        return .meetsPolicy
    }
}
