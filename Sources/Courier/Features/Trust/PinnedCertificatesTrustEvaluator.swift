/// Trusts a server that shows one of the pinned certificates, after the default checks unless
/// told otherwise.
///
/// With `acceptSelfSignedCertificates`, the pinned certificates are the only roots trusted for
/// the host: the handshake passes only when the server's chain leads to one of them, which then
/// is in the chain. That is how to pin a self-signed certificate, or a root CA's. (Over
/// AsyncHTTPClient a pinned intermediate cannot end the chain: BoringSSL accepts only a
/// self-signed certificate there, and SwiftNIO does not expose its partial-chain flag. Pin an
/// intermediate without `acceptSelfSignedCertificates`, with its root among the session's roots.)
///
/// Without it, the chain must lead to a root the session trusts, and a pinned certificate must be
/// in it (``ServerTrust/certificates``): the server's own, an intermediate's or the root's.
public struct PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    /// The certificates pinned.
    public let certificates: [TLSCertificate]
    private let acceptSelfSignedCertificates: Bool
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// - Parameters:
    ///   - certificates: The certificates to pin.
    ///   - acceptSelfSignedCertificates: Whether the pinned certificates are trusted as roots for
    ///     the host; `false` by default.
    ///   - performDefaultValidation: Whether the chain must lead to a trusted root; `true` by default.
    ///   - validateHost: Whether the certificate must name the host; `true` by default.
    public init(
        certificates: [TLSCertificate],
        acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// The default checks; with self-signed certificates accepted, against the pinned
    /// certificates as the only roots.
    public var handshakeChecks: HandshakeChecks {
        if acceptSelfSignedCertificates {
            return HandshakeChecks(
                validatesHost: validateHost,
                additionalTrustRoots: certificates,
                trustsOnlyAdditionalRoots: true
            )
        }
        // As in Alamofire, checking the host evaluates the chain too.
        return HandshakeChecks(
            validatesCertificateChain: performDefaultValidation || validateHost,
            validatesHost: validateHost
        )
    }

    /// `false` when self-signed certificates are accepted: the handshake checks the pins then.
    public var evaluatesCertificates: Bool { !acceptSelfSignedCertificates }

    /// Throws ``CourierError/ServerTrustFailureReason/certificatePinningFailed(host:seen:)``
    /// unless the server showed a pinned certificate. With self-signed certificates accepted,
    /// the handshake has already made the chain lead to one, and nothing more is checked.
    public func evaluate(_ trust: ServerTrust) throws {
        if acceptSelfSignedCertificates { return }
        guard trust.certificates.contains(where: certificates.contains) else {
            throw CourierError.serverTrustEvaluationFailed(
                reason: .certificatePinningFailed(host: trust.host, seen: trust.certificates.map(\.publicKeyPin))
            )
        }
    }
}
