/// Trusts a server whose certificates are not revoked, after the default checks.
///
/// Neither transport can check revocation on Linux (BoringSSL fetches no CRL and asks no OCSP
/// responder, and FoundationNetworking has no trust API), nor can Courier's URLSession transport
/// yet on Apple platforms: a request this evaluator serves fails at once with
/// ``CourierError/Kind/serverTrustEvaluationFailed``
/// (``CourierError/ServerTrustFailureReason/unsupported(host:reason:)``). It is never skipped
/// silently.
public struct RevocationTrustEvaluator: ServerTrustEvaluating {
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// - Parameters:
    ///   - performDefaultValidation: Whether the chain must lead to a trusted root; `true` by default.
    ///   - validateHost: Whether the certificate must name the host; `true` by default.
    public init(performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// The default checks, and revocation.
    public var handshakeChecks: HandshakeChecks {
        HandshakeChecks(
            validatesCertificateChain: performDefaultValidation || validateHost,
            validatesHost: validateHost,
            checksRevocation: true
        )
    }

    /// `false`: revocation is the handshake's to check.
    public var evaluatesCertificates: Bool { false }

    /// Nothing more to check.
    public func evaluate(_ trust: ServerTrust) throws {}
}
