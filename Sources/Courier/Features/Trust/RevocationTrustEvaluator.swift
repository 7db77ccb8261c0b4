/// Trusts a server whose certificates are not revoked, after the default checks.
///
/// Over AsyncHTTPClient, Courier asks each certificate's OCSP responder (RFC 6960, the address the
/// certificate names) once the handshake is done, for the server's certificate and every
/// intermediate of the chain it was accepted through (``ServerTrust/certificates``), before the
/// connection carries a request. BoringSSL itself fetches no CRL and asks no OCSP responder.
///
/// - A `revoked` answer refuses the server, with
///   ``CourierError/ServerTrustFailureReason/certificateRejected(host:problem:)``.
/// - Without ``Options/requirePositiveResponse`` (a best attempt, as Apple's checks and
///   Alamofire's default make it), a responder that cannot be reached, or an answer that is
///   neither `good` nor `revoked`, passes that certificate and the next one is still asked; a
///   certificate that names only a CRL goes unchecked. With it, each refuses the server (so do
///   chains whose intermediates name only CRLs, as Let's Encrypt's do).
/// - What the server controls cannot switch the check off: a chain that cannot be rebuilt (the
///   server showed the second connection something else, say) is refused in either mode, and so
///   is a chain ending at a trusted certificate that is not self-signed and names a responder.
/// - A certificate that names neither a responder nor a CRL has nothing to check.
/// - Revocations, and with ``Options/requirePositiveResponse`` all-`good` answers, are kept ten
///   minutes per server certificate; connections checking one certificate at once share one
///   check. Each responder gets 4 s, the whole chain 10 s.
///
/// What Courier cannot honour fails the request at once with
/// ``CourierError/ServerTrustFailureReason/unsupported(host:reason:)``, never checked more
/// loosely: CRLs (``Options/crl`` without ``Options/ocsp``), ``Options/networkAccessDisabled``
/// (Courier keeps no answers across runs), a chain the handshake does not validate, a transport
/// whose connections go through a proxy (the chain is read with a second connection), the system's
/// roots on Apple platforms (swift-certificates reads them on Linux only), and every request over
/// URLSession on Linux (FoundationNetworking has no trust API) and, for now, on Apple platforms.
public struct RevocationTrustEvaluator: ServerTrustEvaluating {
    /// How revocation is checked: Alamofire's names for Apple's revocation policy flags.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The options' bits (Courier's own, not Apple's `CFOptionFlags` values).
        public let rawValue: UInt

        /// Creates options from their raw bits.
        public init(rawValue: UInt) {
            self.rawValue = rawValue
        }

        /// Check with OCSP, the responder each certificate names.
        public static let ocsp = Options(rawValue: 1 << 0)
        /// Check with the certificate revocation lists the certificates name. Courier reads none:
        /// without ``ocsp`` such a request fails with `.unsupported`, and with it a certificate
        /// that names only a CRL goes unchecked unless ``requirePositiveResponse`` refuses it.
        public static let crl = Options(rawValue: 1 << 1)
        /// Prefer CRLs to OCSP where both are possible (Courier checks OCSP only).
        public static let preferCRL = Options(rawValue: 1 << 2)
        /// Refuse a certificate whose status is not known to be good: its responder could not be
        /// reached, or answered `unknown` or not at all. Without it, only a `revoked` answer refuses.
        public static let requirePositiveResponse = Options(rawValue: 1 << 3)
        /// Use only answers already known, without asking over the network (not supported by
        /// Courier, which keeps no answers across runs: such a request fails with `.unsupported`).
        public static let networkAccessDisabled = Options(rawValue: 1 << 4)
        /// OCSP or CRL, whichever the certificates offer: the default.
        public static let any: Options = [.ocsp, .crl]
    }

    private let performDefaultValidation: Bool
    private let validateHost: Bool
    /// How revocation is checked.
    public let options: Options

    /// - Parameters:
    ///   - performDefaultValidation: Whether the chain must lead to a trusted root; `true` by default.
    ///   - validateHost: Whether the certificate must name the host; `true` by default.
    ///   - options: How revocation is checked; ``Options/any`` by default, as in Alamofire.
    public init(performDefaultValidation: Bool = true, validateHost: Bool = true, options: Options = .any) {
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.options = options
    }

    /// The default checks, and revocation.
    public var handshakeChecks: HandshakeChecks {
        HandshakeChecks(
            validatesCertificateChain: performDefaultValidation || validateHost,
            validatesHost: validateHost,
            checksRevocation: true,
            revocationOptions: options
        )
    }

    /// `false`: revocation is the transport's to check.
    public var evaluatesCertificates: Bool { false }

    /// Nothing more to check.
    public func evaluate(_ trust: ServerTrust) throws {}
}
