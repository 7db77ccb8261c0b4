import Foundation

/// A private key, as its DER bytes: the key of a ``ClientCertificate``.
///
/// Read one from PEM (`PRIVATE KEY`, `EC PRIVATE KEY` or `RSA PRIVATE KEY`, unencrypted) or DER.
/// The TLS stack parses the key when it first uses it. Its description never shows the key.
public struct TLSPrivateKey: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The key's DER encoding (PKCS #8, or the algorithm's own form).
    public let derEncoded: [UInt8]

    /// The key in `derEncoded`.
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when the bytes are not DER.
    public init(derEncoded: [UInt8]) throws(CourierError) {
        var reader = DERReader(derEncoded[...])
        guard let key = reader.next(), key.tag == DERReader.sequenceTag, reader.isAtEnd else {
            throw .invalidCertificate(reason: "the bytes are not a DER-encoded private key")
        }
        self.derEncoded = derEncoded
    }

    /// The first private-key block of `pemEncoded` (which may also hold certificates).
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when the text holds no unencrypted
    ///   private key.
    public init(pemEncoded: String) throws(CourierError) {
        let blocks: [PEMBlock]
        do {
            blocks = try PEMBlock.blocks(in: pemEncoded)
        } catch {
            throw .invalidCertificate(reason: TLSCertificate.describe(error))
        }
        if blocks.contains(where: { $0.label == "ENCRYPTED PRIVATE KEY" }) {
            throw .invalidCertificate(reason: "the private key is encrypted; decrypt it first (openssl pkcs8)")
        }
        guard let block = blocks.first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
            throw .invalidCertificate(reason: "the PEM text holds no PRIVATE KEY block")
        }
        try self.init(derEncoded: block.bytes)
    }

    /// The key in the file at `url`: PEM or DER.
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when the file cannot be read or holds no key.
    public init(contentsOf url: URL) throws(CourierError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .invalidCertificate(reason: "\(url.path) could not be read (\(error.localizedDescription))")
        }
        // A DER key starts with 0x30, which is also ASCII "0": DER only if it reads as one.
        if data.first == DERReader.sequenceTag, let key = try? TLSPrivateKey(derEncoded: [UInt8](data)) {
            self = key
        } else {
            try self.init(pemEncoded: String(decoding: data, as: UTF8.self))
        }
    }

    /// Says only that this is a key: the key itself is a credential.
    public var description: String { "TLSPrivateKey(redacted)" }

    /// No children: `dump` and debuggers show the description, never the key's bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
