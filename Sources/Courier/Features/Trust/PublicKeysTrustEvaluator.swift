import Foundation

/// Trusts a server whose certificate has one of the pinned public keys, after the default checks
/// unless told otherwise. A key pin outlives the certificate: renewing with the same key keeps it.
///
/// Pins are SHA-256 hashes of a `subjectPublicKeyInfo`, base64, as HPKP and curl's
/// `--pinnedpubkey` write them (`sha256//` in front is optional):
///
/// ```swift
/// let evaluator = PublicKeysTrustEvaluator(pins: ["sha256//r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="])
/// ```
///
/// Get a server's with `openssl s_client -connect host:443 </dev/null | openssl x509 -pubkey
/// -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`, or from a
/// certificate with ``TLSCertificate/publicKeyPin``. Keep a backup pin for the key you will move
/// to.
///
/// A pin matches any certificate of the chain the server was accepted through
/// (``ServerTrust/certificates``): the server's own, an intermediate's, or the root's, as in HPKP.
/// Pinning an issuer's key keeps working across the server's renewals, for as long as that
/// issuer signs them. Over AsyncHTTPClient a pin on the server's own key costs nothing more;
/// any other pin costs one more handshake per server certificate, every half hour (see
/// ``ServerTrust/certificates`` for when the chain cannot be rebuilt).
public struct PublicKeysTrustEvaluator: ServerTrustEvaluating {
    /// The pins, each the base64 SHA-256 of a `subjectPublicKeyInfo` (without `sha256//`).
    public let pins: Set<String>
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// - Parameters:
    ///   - pins: Base64 SHA-256 hashes of the keys' `subjectPublicKeyInfo`, with or without
    ///     `sha256//` in front.
    ///   - performDefaultValidation: Whether the chain must lead to a trusted root; `true` by default.
    ///   - validateHost: Whether the certificate must name the host; `true` by default. As in
    ///     Alamofire, checking the host checks the chain as well: skip both for a self-signed server.
    public init(pins: [String], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.pins = Set(
            pins.map { pin in
                let pin = pin.trimmingCharacters(in: .whitespacesAndNewlines)
                return pin.hasPrefix("sha256//") ? String(pin.dropFirst("sha256//".count)) : pin
            }
        )
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Pins the public keys of `certificates`.
    public init(keysOf certificates: [TLSCertificate], performDefaultValidation: Bool = true, validateHost: Bool = true)
    {
        self.init(
            pins: certificates.map(\.publicKeyPin),
            performDefaultValidation: performDefaultValidation,
            validateHost: validateHost
        )
    }

    /// The default checks, unless turned off.
    public var handshakeChecks: HandshakeChecks {
        // As in Alamofire, checking the host evaluates the chain too.
        HandshakeChecks(
            validatesCertificateChain: performDefaultValidation || validateHost,
            validatesHost: validateHost
        )
    }

    /// Throws ``CourierError/ServerTrustFailureReason/publicKeyPinningFailed(host:seen:)`` unless a
    /// certificate shown has a pinned key.
    public func evaluate(_ trust: ServerTrust) throws {
        let seen = trust.certificates.map(\.publicKeyPin)
        guard seen.contains(where: { pins.contains(String($0.dropFirst("sha256//".count))) }) else {
            throw CourierError.serverTrustEvaluationFailed(
                reason: .publicKeyPinningFailed(host: trust.host, seen: seen)
            )
        }
    }
}
