import CourierHashes
import Foundation

/// An X.509 certificate, as its DER bytes: one to trust as a root, to pin, or to present as a
/// client.
///
/// Read one from PEM (`-----BEGIN CERTIFICATE-----`, what `openssl` and most servers' files
/// hold) or from DER bytes; ``certificates(contentsOf:)`` reads a file of either kind. Courier
/// checks that the bytes have a certificate's shape and reads its public key for pins; the TLS
/// stack parses the rest when it uses the certificate.
///
/// ```swift
/// let root = try TLSCertificate(pemEncoded: String(contentsOfFile: "ca.pem", encoding: .utf8))
/// print(root.publicKeyPin)   // "sha256//…", as curl's --pinnedpubkey takes it
/// ```
public struct TLSCertificate: Sendable, Hashable, CustomStringConvertible {
    /// The certificate's DER encoding.
    public let derEncoded: [UInt8]
    /// The DER encoding of its `subjectPublicKeyInfo`, found when the certificate was read.
    private let publicKeyInfoRange: Range<Int>

    /// The certificate in `derEncoded`.
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when the bytes are not a DER certificate.
    public init(derEncoded: [UInt8]) throws(CourierError) {
        guard let publicKeyInfo = DERReader.subjectPublicKeyInfo(ofCertificate: derEncoded) else {
            throw .invalidCertificate(reason: "the bytes are not a DER-encoded X.509 certificate")
        }
        self.derEncoded = derEncoded
        publicKeyInfoRange = publicKeyInfo.startIndex..<publicKeyInfo.endIndex
    }

    /// The one certificate in `pemEncoded`: a `CERTIFICATE` block.
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when the text holds no certificate, more
    ///   than one, or a malformed one; use ``certificates(pemEncoded:)`` for a chain.
    public init(pemEncoded: String) throws(CourierError) {
        let certificates = try Self.certificates(pemEncoded: pemEncoded)
        guard certificates.count == 1 else {
            throw .invalidCertificate(
                reason: "the PEM text holds \(certificates.count) certificates where one was expected"
            )
        }
        self = certificates[0]
    }

    /// Every `CERTIFICATE` block of `pemEncoded`, in order (a chain is leaf first). Other blocks,
    /// such as a private key kept in the same file, are skipped.
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when the text is not PEM or holds no
    ///   certificate.
    public static func certificates(pemEncoded: String) throws(CourierError) -> [TLSCertificate] {
        let blocks: [PEMBlock]
        do {
            blocks = try PEMBlock.blocks(in: pemEncoded)
        } catch {
            throw .invalidCertificate(reason: Self.describe(error))
        }
        let certificates = try blocks.filter { $0.label == "CERTIFICATE" || $0.label == "X509 CERTIFICATE" }
            .map { block throws(CourierError) in try TLSCertificate(derEncoded: block.bytes) }
        guard !certificates.isEmpty else {
            throw .invalidCertificate(reason: "the PEM text holds no CERTIFICATE block")
        }
        return certificates
    }

    /// The certificates in the file at `url`: PEM (any number) or DER (one).
    ///
    /// - Throws: ``CourierError/Kind/invalidCertificate`` when the file cannot be read or holds no
    ///   certificate.
    public static func certificates(contentsOf url: URL) throws(CourierError) -> [TLSCertificate] {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .invalidCertificate(reason: "\(url.path) could not be read (\(error.localizedDescription))")
        }
        // A DER certificate starts with 0x30, which is also ASCII "0": DER only if it reads as one.
        if data.first == DERReader.sequenceTag, let certificate = try? TLSCertificate(derEncoded: [UInt8](data)) {
            return [certificate]
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .invalidCertificate(reason: "\(url.path) is neither PEM text nor a DER certificate")
        }
        return try certificates(pemEncoded: text)
    }

    /// The DER encoding of the certificate's `subjectPublicKeyInfo`: the public key and its
    /// algorithm, what a public-key pin is the hash of.
    public var subjectPublicKeyInfo: ArraySlice<UInt8> { derEncoded[publicKeyInfoRange] }

    /// The pin of the certificate's public key, as HPKP and curl's `--pinnedpubkey` write it:
    /// `sha256//` then the base64 SHA-256 of ``subjectPublicKeyInfo``. It stays the same when the
    /// certificate is renewed with the same key.
    public var publicKeyPin: String {
        var hasher = SHA256()
        hasher.update(subjectPublicKeyInfo)
        return "sha256//" + Data(hasher.finalize()).base64EncodedString()
    }

    /// The dates the certificate is valid between, as it states them; `nil` if they cannot be read.
    public var validity: ClosedRange<Date>? {
        guard let fields = DERReader.fields(ofCertificate: derEncoded),
            let dates = DERReader.dates(ofValidity: fields.validity), dates.notBefore <= dates.notAfter
        else { return nil }
        return dates.notBefore...dates.notAfter
    }

    /// Whether the certificate names itself as its issuer (a root CA's, or a self-signed server's).
    public var isSelfIssued: Bool {
        guard let fields = DERReader.fields(ofCertificate: derEncoded) else { return false }
        return fields.issuer.encoded.elementsEqual(fields.subject.encoded)
    }

    /// The PEM encoding: one `CERTIFICATE` block with 64-character lines.
    public var pemEncoded: String {
        let base64 = Data(derEncoded).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// The certificate's size and public-key pin.
    public var description: String {
        "TLSCertificate(\(derEncoded.count) bytes, \(publicKeyPin))"
    }

    public static func == (lhs: TLSCertificate, rhs: TLSCertificate) -> Bool {
        lhs.derEncoded == rhs.derEncoded
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(derEncoded)
    }

    static func describe(_ problem: PEMBlock.Problem) -> String {
        switch problem {
        case .noBlock: return "the text holds no PEM block (-----BEGIN …-----)"
        case .unterminated(let label): return "the PEM block \(label) has no END line"
        case .mismatchedEnd(let label): return "the PEM block \(label) ends with another label"
        case .invalidBase64(let label): return "the PEM block \(label) is not valid base64"
        case .encrypted(let label): return "the PEM block \(label) is encrypted; decrypt it first (openssl pkey)"
        }
    }
}
