/// Everything a transport needs to connect to one host as a session's trust settings say: the
/// handshake's checks and roots, the client certificate, and the evaluator to run once the
/// handshake is done. What ``RequestHead/serverTrustPolicy`` carries to a transport
/// (``ServerTrustEnforcing``).
///
/// A session makes one per host it sends `https` requests to and keeps it, so that two
/// requests with the same policy object trust alike: a transport may pool their connections
/// together, and must not pool them with others'.
@_spi(CourierTransport)
public final class ServerTrustPolicy: Sendable {
    /// The host the policy is for.
    public let host: String
    /// The evaluator to run after the handshake, if ``ServerTrustEvaluating/evaluatesCertificates``.
    public let evaluator: (any ServerTrustEvaluating)?
    /// What the handshake checks.
    public let handshakeChecks: HandshakeChecks
    /// The roots the session trusts.
    public let trustRoots: TrustRoots
    /// The certificate to show a server that asks for one.
    public let clientCertificate: ClientCertificate?
    /// Whether the evaluator accepting the server's own certificate settles it: Courier's pinning
    /// evaluators accept when any certificate of the chain matches, so a transport that sees the
    /// rest of the chain only at a cost (AsyncHTTPClient) may skip it when the first one matches.
    /// `false` for an evaluator of the caller's, which is always shown the whole chain.
    public let acceptsOnServerCertificateAlone: Bool
    /// What to run when the policy goes away (its session with it).
    private let releaseActions = Protected([@Sendable () -> Void]())

    init(
        host: String,
        evaluator: (any ServerTrustEvaluating)?,
        trustRoots: TrustRoots,
        clientCertificate: ClientCertificate?
    ) {
        self.host = host
        self.evaluator = evaluator?.evaluatesCertificates == true ? evaluator : nil
        self.acceptsOnServerCertificateAlone = evaluator.map(Self.acceptsOnAnyMatch) ?? true
        self.handshakeChecks = evaluator?.handshakeChecks ?? .standard
        self.trustRoots = trustRoots
        self.clientCertificate = clientCertificate
    }

    deinit {
        for action in releaseActions.withLock({ $0 }) { action() }
    }

    /// Runs `action` when the policy goes away: when a transport may let go of what it keeps for
    /// the policy (a connection pool). `action` must not touch the policy.
    public func whenReleased(_ action: @escaping @Sendable () -> Void) {
        releaseActions.withLock { $0.append(action) }
    }

    /// Whether the policy asks for nothing beyond the system's default checks: no evaluator, the
    /// standard handshake, the system's roots, no client certificate. A session sends such a
    /// request as one without settings, so no transport is handed such a policy.
    public var isDefault: Bool {
        evaluator == nil && handshakeChecks == .standard && trustRoots == .system && clientCertificate == nil
    }

    /// Whether `evaluator` accepts when any one certificate matches: showing it more of the chain
    /// never turns its acceptance into a refusal. A composite of such evaluators (all must accept) is one too.
    private static func acceptsOnAnyMatch(_ evaluator: any ServerTrustEvaluating) -> Bool {
        if let composite = evaluator as? CompositeTrustEvaluator {
            return composite.evaluators.allSatisfy(acceptsOnAnyMatch)
        }
        return evaluator is PublicKeysTrustEvaluator || evaluator is PinnedCertificatesTrustEvaluator
            || evaluator is DefaultTrustEvaluator || evaluator is DisabledTrustEvaluator
            || evaluator is RevocationTrustEvaluator
    }

    /// Runs the evaluator on `certificates`; a refusal comes back as the ``CourierError`` to report.
    public func evaluate(_ certificates: [TLSCertificate]) -> CourierError? {
        guard let evaluator else { return nil }
        do {
            try evaluator.evaluate(ServerTrust(host: host, certificates: certificates))
            return nil
        } catch let error as CourierError {
            return error
        } catch {
            return .serverTrustEvaluationFailed(reason: .customEvaluationFailed(host: host, error: error))
        }
    }
}

/// A transport that applies a ``ServerTrustPolicy`` to the heads that carry one
/// (``RequestHead/serverTrustPolicy``). A session hands a policy only to a transport that
/// conforms; to any other, a request that needs one fails at once, so that no trust setting is
/// ever skipped.
@_spi(CourierTransport)
public protocol ServerTrustEnforcing: Transport {
    /// Why the transport cannot apply `policy`, or `nil` when it can.
    func cannotEnforce(_ policy: ServerTrustPolicy) -> String?
}
