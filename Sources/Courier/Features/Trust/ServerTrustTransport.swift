import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Puts a session's trust settings on each `https` head it sends (``RequestHead/serverTrustPolicy``),
/// every redirect hop's too, and fails at once a request whose host the ``ServerTrustManager``
/// refuses, or whose policy the network transport cannot apply: a trust setting is never skipped.
/// It sits outside the session's cache, so a refused host is not answered from the cache either.
struct ServerTrustTransport: WrappingTransport {
    /// What the heads go to: the cache, or the network transport itself.
    let base: any Transport
    /// The transport that connects, which must apply the policies.
    let network: any Transport
    let manager: ServerTrustManager?
    let trustRoots: TrustRoots
    let clientCertificate: ClientCertificate?
    /// One policy per host, so that a transport can pool by policy; dropped whole past
    /// `maximumPolicies` hosts, which only costs new pools.
    private let policies = Protected([String: ServerTrustPolicy]())
    private static let maximumPolicies = 1_024

    init(
        base: any Transport,
        network: any Transport,
        manager: ServerTrustManager?,
        trustRoots: TrustRoots,
        clientCertificate: ClientCertificate?
    ) {
        self.base = base
        self.network = network
        self.manager = manager
        self.trustRoots = trustRoots
        self.clientCertificate = clientCertificate
    }

    /// Whether a session with these settings needs the wrapper at all.
    static func isNeeded(
        manager: ServerTrustManager?,
        trustRoots: TrustRoots,
        clientCertificate: ClientCertificate?
    )
        -> Bool
    {
        manager != nil || trustRoots != .system || clientCertificate != nil
    }

    func makeTask(
        for head: RequestHead,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    )
        -> any TransportTask
    {
        var head = head
        head.serverTrustPolicy = nil
        guard head.url.scheme?.lowercased() == "https" else {
            return base.makeTask(for: head, body: body, eventHandler: eventHandler)
        }
        let host = ServerTrustManager.normalized(head.url.host ?? "")
        let policy: ServerTrustPolicy
        do {
            policy = try self.policy(forHost: host)
        } catch {
            return Self.failing(with: error, eventHandler: eventHandler)
        }
        // Nothing beyond the system's checks (a `DefaultTrustEvaluator`, or no entry where not
        // every host must be evaluated): the request goes as one without settings, the same on
        // every transport.
        if policy.isDefault { return base.makeTask(for: head, body: body, eventHandler: eventHandler) }
        if let reason = policy.handshakeChecks.unsatisfiable {
            return Self.failing(
                with: .serverTrustEvaluationFailed(reason: .unsupported(host: host, reason: reason)),
                eventHandler: eventHandler
            )
        }
        guard let enforcing = network as? any ServerTrustEnforcing else {
            return Self.failing(
                with: .serverTrustEvaluationFailed(
                    reason: .unsupported(
                        host: host,
                        reason: "the session's transport (\(type(of: network))) cannot apply trust settings"
                    )
                ),
                eventHandler: eventHandler
            )
        }
        if let reason = enforcing.cannotEnforce(policy) {
            return Self.failing(
                with: .serverTrustEvaluationFailed(reason: .unsupported(host: host, reason: reason)),
                eventHandler: eventHandler
            )
        }
        head.serverTrustPolicy = policy
        return base.makeTask(for: head, body: body, eventHandler: eventHandler)
    }

    private func policy(forHost host: String) throws(CourierError) -> ServerTrustPolicy {
        if let policy = policies.withLock({ $0[host] }) { return policy }
        let evaluator = try manager?.serverTrustEvaluator(forHost: host)
        let policy = ServerTrustPolicy(
            host: host,
            evaluator: evaluator,
            trustRoots: trustRoots,
            clientCertificate: clientCertificate
        )
        return policies.withLock { policies in
            if let existing = policies[host] { return existing }
            if policies.count >= Self.maximumPolicies { policies.removeAll() }
            policies[host] = policy
            return policy
        }
    }

    private static func failing(with error: CourierError, eventHandler: any TransportEventHandler) -> any TransportTask
    {
        FailedTransportTask(
            error: URLError(
                .serverCertificateUntrusted,
                userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: error.localizedDescription]
            ),
            eventHandler: eventHandler
        )
    }
}
