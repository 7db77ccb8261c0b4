/// Chooses the ``ServerTrustEvaluating`` evaluator for each host a session's requests go to:
/// Alamofire's `ServerTrustManager`, which works the same on Linux.
///
/// ```swift
/// let manager = ServerTrustManager(evaluators: [
///     "api.example.org": PublicKeysTrustEvaluator(pins: [currentPin, backupPin]),
///     "*.cdn.example.org": DefaultTrustEvaluator(),
/// ])
/// let session = Session(configuration: .init { $0.serverTrustManager = manager })
/// ```
///
/// A host is matched exactly (case aside) first, then by a wildcard entry `*.parent` that stands
/// for one label (`*.example.org` covers `api.example.org`, not `example.org` or
/// `a.b.example.org`), as certificates' wildcards do. A host with no entry fails its request
/// with ``CourierError/ServerTrustFailureReason/noRequiredEvaluator(host:)`` when
/// `allHostsMustBeEvaluated` (the default, as in Alamofire); otherwise it gets the default checks.
/// Only `https` requests are evaluated.
///
/// Subclass it and override ``serverTrustEvaluator(forHost:)`` for another rule, as in Alamofire.
/// A session asks once per host it sends to, from any thread, and keeps the answer.
// `@unchecked`: the class is open, which the compiler cannot check; its own state is immutable,
// and a subclass must be safe to call from any thread, as documented above.
open class ServerTrustManager: @unchecked Sendable {
    /// Whether a host without an evaluator fails its requests (`true`) or gets the default checks.
    public let allHostsMustBeEvaluated: Bool
    /// The evaluators, by host or `*.parent` pattern, lowercased.
    public let evaluators: [String: any ServerTrustEvaluating]

    /// - Parameters:
    ///   - allHostsMustBeEvaluated: Whether a host without an evaluator fails its requests;
    ///     `true` by default.
    ///   - evaluators: The evaluator for each host, or for each `*.parent` pattern.
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        var lowercased: [String: any ServerTrustEvaluating] = [:]
        for (host, evaluator) in evaluators { lowercased[Self.normalized(host)] = evaluator }
        self.evaluators = lowercased
    }

    /// The evaluator for `host`: its own entry, else its wildcard's; `nil` when there is none and
    /// not every host must be evaluated.
    ///
    /// - Throws: ``CourierError/ServerTrustFailureReason/noRequiredEvaluator(host:)`` when there is
    ///   none and every host must be evaluated.
    open func serverTrustEvaluator(forHost host: String) throws(CourierError) -> (any ServerTrustEvaluating)? {
        let host = Self.normalized(host)
        if let evaluator = evaluators[host] { return evaluator }
        if let dot = host.firstIndex(of: "."), let evaluator = evaluators["*" + host[dot...]] { return evaluator }
        if allHostsMustBeEvaluated { throw .serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host: host)) }
        return nil
    }

    /// A host as entries are kept: lowercased, without a final dot or IPv6 brackets.
    static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }
}
