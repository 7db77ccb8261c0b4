/// Trusts a server only when every one of its evaluators does: the handshake makes the checks
/// any of them asks for, then each evaluates in order and the first refusal wins.
public struct CompositeTrustEvaluator: ServerTrustEvaluating {
    let evaluators: [any ServerTrustEvaluating]

    /// - Parameter evaluators: The evaluators that must all trust the server.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    /// Every check any evaluator asks for. At most one evaluator may bring roots of its own: one
    /// handshake checks against one set of roots, and the union of two would accept a chain either
    /// one alone refuses, so such a combination fails its requests instead.
    public var handshakeChecks: HandshakeChecks {
        let all = evaluators.map(\.handshakeChecks)
        guard !all.isEmpty else { return .standard }
        let withRoots = all.filter { !$0.additionalTrustRoots.isEmpty || $0.trustsOnlyAdditionalRoots }
        var checks = HandshakeChecks(
            validatesCertificateChain: all.contains { $0.validatesCertificateChain },
            validatesHost: all.contains { $0.validatesHost },
            additionalTrustRoots: withRoots.first?.additionalTrustRoots ?? [],
            trustsOnlyAdditionalRoots: withRoots.first?.trustsOnlyAdditionalRoots ?? false,
            checksRevocation: all.contains { $0.checksRevocation },
            revocationOptions: Self.strictest(all.filter(\.checksRevocation).map(\.revocationOptions))
        )
        checks.unsatisfiable =
            withRoots.count > 1
            ? "a CompositeTrustEvaluator combines evaluators with roots of their own, which one handshake cannot check apart"
            : all.lazy.compactMap(\.unsatisfiable).first
        return checks
    }

    /// Whether any evaluator looks at the certificates.
    public var evaluatesCertificates: Bool { evaluators.contains { $0.evaluatesCertificates } }

    /// What satisfies every one of `options`: only the methods all of them allow (an evaluator
    /// that wants CRLs is not satisfied by another's OCSP), and every requirement any makes.
    private static func strictest(_ options: [RevocationTrustEvaluator.Options]) -> RevocationTrustEvaluator.Options {
        guard let first = options.first else { return .any }
        let methods: RevocationTrustEvaluator.Options = [.ocsp, .crl]
        return options.dropFirst().reduce(first) { merged, next in
            merged.intersection(methods).intersection(next.intersection(methods))
                .union(merged.subtracting(methods)).union(next.subtracting(methods))
        }
    }

    /// Each evaluator's evaluation, in order.
    public func evaluate(_ trust: ServerTrust) throws {
        for evaluator in evaluators { try evaluator.evaluate(trust) }
    }
}
