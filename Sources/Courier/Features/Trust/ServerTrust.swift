/// What a transport saw of a server during the TLS handshake: what a ``ServerTrustEvaluating``
/// evaluator decides on.
public struct ServerTrust: Sendable {
    /// The host the request was for.
    public let host: String
    /// The chain the server's certificate was accepted through: the server's own first, then each
    /// issuer up to the root (which servers seldom send).
    ///
    /// When the handshake checked the chain, it is a chain to one of the roots the session trusts,
    /// valid now by RFC 5280, each certificate allowed for TLS servers; when it did not
    /// (`performDefaultValidation: false` and `validateHost: false`), it runs through the
    /// certificates the server sent, each one there because its key signed the one before.
    ///
    /// Over AsyncHTTPClient, which shows only the server's certificate after the handshake, Courier
    /// reads the rest with one more handshake per server certificate (kept half an hour) and
    /// rebuilds the chain with swift-certificates. Where it cannot, this holds the server's
    /// certificate alone: through a proxy, when that handshake fails, when swift-certificates
    /// builds no chain the handshake's would match (it may be stricter than BoringSSL), and on Apple
    /// platforms with the system's roots, which swift-certificates reads on Linux only.
    public let certificates: [TLSCertificate]

    /// A trust to evaluate: what a transport builds, or a test of an evaluator.
    public init(host: String, certificates: [TLSCertificate]) {
        self.host = host
        self.certificates = certificates
    }
}

/// What the TLS handshake itself checks before an evaluator looks at the server's certificates.
public struct HandshakeChecks: Sendable, Hashable {
    /// Whether the server's chain must lead to a trusted root (``Session/Configuration/trustRoots``
    /// and ``additionalTrustRoots``) and be within its dates.
    public var validatesCertificateChain: Bool
    /// Whether the certificate must name the host (or IP address) the request was for.
    public var validatesHost: Bool
    /// Certificates trusted as roots for this host, beside the session's.
    public var additionalTrustRoots: [TLSCertificate]
    /// Whether ``additionalTrustRoots`` are the only roots trusted for this host (the session's
    /// and the system's are not): a chain that passes then leads to one of them.
    public var trustsOnlyAdditionalRoots: Bool
    /// Whether the certificates' revocation must be checked (CRL or OCSP).
    public var checksRevocation: Bool
    /// How revocation is checked, when ``checksRevocation`` is on.
    public var revocationOptions: RevocationTrustEvaluator.Options
    /// Why no handshake can make these checks as asked, or `nil`: a request needing them fails
    /// rather than be checked more loosely (evaluators combined with different roots of their own).
    var unsatisfiable: String?

    /// The checks, each given.
    public init(
        validatesCertificateChain: Bool = true,
        validatesHost: Bool = true,
        additionalTrustRoots: [TLSCertificate] = [],
        trustsOnlyAdditionalRoots: Bool = false,
        checksRevocation: Bool = false,
        revocationOptions: RevocationTrustEvaluator.Options = .any
    ) {
        self.validatesCertificateChain = validatesCertificateChain
        self.validatesHost = validatesHost
        self.additionalTrustRoots = additionalTrustRoots
        self.trustsOnlyAdditionalRoots = trustsOnlyAdditionalRoots
        self.checksRevocation = checksRevocation
        self.revocationOptions = revocationOptions
    }

    /// The chain and the host checked: what every request gets without a ``ServerTrustManager``.
    public static let standard = HandshakeChecks()
}

/// Decides whether a server is trusted: the handshake's checks it asks for, then its own look at
/// the certificates. Alamofire's `ServerTrustEvaluating`, made to work the same on Linux.
///
/// Courier ships the evaluators Alamofire has (``DefaultTrustEvaluator``,
/// ``PinnedCertificatesTrustEvaluator``, ``PublicKeysTrustEvaluator``,
/// ``CompositeTrustEvaluator``, ``RevocationTrustEvaluator``, ``DisabledTrustEvaluator``); give
/// them to a ``ServerTrustManager``. Write your own for another rule: throw from
/// ``evaluate(_:)`` to refuse the server, and the request fails with
/// ``CourierError/Kind/serverTrustEvaluationFailed`` before anything is sent to it.
public protocol ServerTrustEvaluating: Sendable {
    /// What the TLS handshake checks first; ``HandshakeChecks/standard`` by default.
    var handshakeChecks: HandshakeChecks { get }

    /// Whether ``evaluate(_:)`` has anything to check once the handshake is done; `true` by
    /// default. An evaluator that only sets ``handshakeChecks`` says `false`, and its
    /// connections are pooled with the session's other ones.
    var evaluatesCertificates: Bool { get }

    /// Checks the server once the handshake's checks passed; throws to refuse it (any error; a
    /// ``CourierError`` is reported as it is).
    ///
    /// It runs on a thread the transport shares with other work (an event loop, or Swift's
    /// cooperative pool once the chain has been rebuilt) while the connection waits: keep it
    /// quick, and never block or wait in it.
    func evaluate(_ trust: ServerTrust) throws
}

extension ServerTrustEvaluating {
    /// ``HandshakeChecks/standard``.
    public var handshakeChecks: HandshakeChecks { .standard }

    /// `true`.
    public var evaluatesCertificates: Bool { true }
}
