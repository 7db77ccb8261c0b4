/// Trusts any server, whatever certificate it shows. **For development only**: a request it
/// serves can be read and changed by anyone on the path. Prefer trusting your development CA
/// (``Session/Configuration/trustRoots``) or pinning its certificate with
/// ``PinnedCertificatesTrustEvaluator``'s `acceptSelfSignedCertificates`.
public struct DisabledTrustEvaluator: ServerTrustEvaluating {
    /// The evaluator that checks nothing.
    public init() {}

    /// No check at all.
    public var handshakeChecks: HandshakeChecks {
        HandshakeChecks(validatesCertificateChain: false, validatesHost: false)
    }

    /// `false`.
    public var evaluatesCertificates: Bool { false }

    /// Nothing to check.
    public func evaluate(_ trust: ServerTrust) throws {}
}
