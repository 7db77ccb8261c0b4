/// Trusts a server only when every one of its evaluators does: the handshake makes the checks
/// any of them asks for, then each evaluates in order and the first refusal wins.
public struct CompositeTrustEvaluator: ServerTrustEvaluating {
    private let evaluators: [any ServerTrustEvaluating]

    /// - Parameter evaluators: The evaluators that must all trust the server.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    /// Every check any evaluator asks for; the roots of all of them.
    public var handshakeChecks: HandshakeChecks {
        let all = evaluators.map(\.handshakeChecks)
        guard !all.isEmpty else { return .standard }
        return HandshakeChecks(
            validatesCertificateChain: all.contains { $0.validatesCertificateChain },
            validatesHost: all.contains { $0.validatesHost },
            additionalTrustRoots: all.flatMap(\.additionalTrustRoots),
            trustsOnlyAdditionalRoots: all.contains { $0.trustsOnlyAdditionalRoots },
            checksRevocation: all.contains { $0.checksRevocation }
        )
    }

    /// Whether any evaluator looks at the certificates.
    public var evaluatesCertificates: Bool { evaluators.contains { $0.evaluatesCertificates } }

    /// Each evaluator's evaluation, in order.
    public func evaluate(_ trust: ServerTrust) throws {
        for evaluator in evaluators { try evaluator.evaluate(trust) }
    }
}
