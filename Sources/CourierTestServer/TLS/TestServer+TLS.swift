import NIOSSL

extension TestServer {
    /// How a ``TestServer`` speaks TLS: the certificate it presents and the protocols it offers.
    ///
    /// Set ``TestServer/Configuration/tls`` to serve `https://` on loopback, so a client's TLS and
    /// HTTP/2 code paths are tested without the internet. ``selfSigned`` is ready to use; a client
    /// must trust ``TestCertificate/certificatePEM`` explicitly, which is the point: a client that
    /// does not is expected to refuse the server.
    public struct TLS: Sendable {
        /// The certificates the server presents, PEM-encoded, leaf first.
        public var certificateChain: String
        /// The leaf certificate's private key, PEM-encoded.
        public var privateKey: String
        /// Whether ALPN offers `h2` before `http/1.1`; when `false`, only `http/1.1` is offered, so a
        /// test can force HTTP/1.1 over TLS from the server's side.
        public var offersHTTP2: Bool
        /// The CA certificates (PEM) a client's certificate must chain to, when the server
        /// requires one (mutual TLS); `nil` asks for none. A client without an acceptable
        /// certificate fails the handshake.
        public var requiredClientCertificateIssuers: String?

        /// A TLS setting with your own certificate chain and key.
        ///
        /// - Parameters:
        ///   - certificateChain: The certificates to present, PEM-encoded, leaf first.
        ///   - privateKey: The leaf certificate's private key, PEM-encoded.
        ///   - offersHTTP2: Whether to offer `h2` besides `http/1.1`.
        ///   - requiredClientCertificateIssuers: The CA certificates (PEM) a client certificate
        ///     must chain to, to require one; `nil` (the default) requires none.
        public init(
            certificateChain: String,
            privateKey: String,
            offersHTTP2: Bool = true,
            requiredClientCertificateIssuers: String? = nil
        ) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
            self.offersHTTP2 = offersHTTP2
            self.requiredClientCertificateIssuers = requiredClientCertificateIssuers
        }

        /// The built-in ``TestCertificate`` for `127.0.0.1` and `localhost`, offering `h2` and `http/1.1`.
        public static var selfSigned: TLS {
            TLS(certificateChain: TestCertificate.certificatePEM, privateKey: TestCertificate.privateKeyPEM)
        }

        /// The ALPN protocols offered, in order of preference.
        var applicationProtocols: [String] {
            offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        }

        /// The server-side TLS context; throws NIOSSL's error when the PEM cannot be read.
        func makeContext() throws -> NIOSSLContext {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChain.utf8))
            let key = try NIOSSLPrivateKey(bytes: Array(privateKey.utf8), format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) },
                privateKey: .privateKey(key)
            )
            configuration.applicationProtocols = applicationProtocols
            if let issuers = requiredClientCertificateIssuers {
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(issuers.utf8)))
            }
            return try NIOSSLContext(configuration: configuration)
        }
    }
}
