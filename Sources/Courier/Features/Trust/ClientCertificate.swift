import Foundation

/// A client certificate and its private key, for servers that ask the client to prove who it is
/// (mutual TLS): ``Session/Configuration/clientCertificate``.
///
/// ```swift
/// let identity = try ClientCertificate(
///     certificateFile: URL(fileURLWithPath: "client.pem"),
///     privateKeyFile: URL(fileURLWithPath: "client-key.pem"))
/// let session = Session(configuration: .init { $0.clientCertificate = identity })
/// ```
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The client's certificate first, then any intermediates the server needs to link it to a
    /// root it trusts.
    public let certificateChain: [TLSCertificate]
    /// The private key of the first certificate.
    public let privateKey: TLSPrivateKey

    /// A client certificate from its parts.
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when `certificateChain` is empty.
    public init(certificateChain: [TLSCertificate], privateKey: TLSPrivateKey) throws(CourierError) {
        guard !certificateChain.isEmpty else {
            throw .invalidCertificate(reason: "a client certificate needs at least one certificate")
        }
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }

    /// A client certificate read from files, PEM or DER, as curl's `--cert` and `--key` take
    /// them; the key may sit in the certificate's file (then `privateKeyFile` is `nil`).
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when a file cannot be read or holds no
    ///   certificate or key.
    public init(certificateFile: URL, privateKeyFile: URL? = nil) throws(CourierError) {
        try self.init(
            certificateChain: TLSCertificate.certificates(contentsOf: certificateFile),
            privateKey: TLSPrivateKey(contentsOf: privateKeyFile ?? certificateFile)
        )
    }

    /// The chain's length; the key is never shown.
    public var description: String {
        "ClientCertificate(\(certificateChain.count) certificate(s), key redacted)"
    }

    /// The chain only: `dump` and debuggers never show the key's bytes.
    public var customMirror: Mirror { Mirror(self, children: ["certificateChain": certificateChain]) }
}
