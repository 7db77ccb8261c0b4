/// Trusts a server whose chain leads to a trusted root and, unless told otherwise, whose
/// certificate names the host: what every request gets without a ``ServerTrustManager``.
public struct DefaultTrustEvaluator: ServerTrustEvaluating {
    private let validateHost: Bool

    /// - Parameter validateHost: Whether the certificate must name the host; `true` by default.
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    /// The chain, and the host if asked.
    public var handshakeChecks: HandshakeChecks { HandshakeChecks(validatesHost: validateHost) }

    /// `false`: the handshake checks everything.
    public var evaluatesCertificates: Bool { false }

    /// Nothing more to check.
    public func evaluate(_ trust: ServerTrust) throws {}
}
