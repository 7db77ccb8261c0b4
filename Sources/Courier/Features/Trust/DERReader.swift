/// Reads the few DER (X.690) structures Courier needs from a certificate: the TLV elements of a
/// `SEQUENCE`, without decoding what they hold.
///
/// Certificates reach Courier from the user (PEM or DER files) and from servers (their TLS
/// handshake): every read is bounds-checked, each byte is looked at once, and a malformed input
/// is `nil`, never a trap.
struct DERReader {
    /// One element: its tag byte, the whole encoding (tag, length and content), and the content.
    struct Element {
        let tag: UInt8
        let encoded: ArraySlice<UInt8>
        let content: ArraySlice<UInt8>
    }

    static let sequenceTag: UInt8 = 0x30

    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { bytes.isEmpty }

    /// The next element, or `nil` when the bytes left are not one: a multi-byte tag, an
    /// indefinite length, a length of more than four bytes, or one past the end.
    mutating func next() -> Element? {
        guard let tag = bytes.first, tag & 0x1F != 0x1F else { return nil }
        var index = bytes.index(after: bytes.startIndex)
        guard index < bytes.endIndex else { return nil }
        let first = bytes[index]
        index = bytes.index(after: index)
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            // 0x80 is BER's indefinite length, which DER forbids; more than three bytes would
            // describe an element over 16 MiB, larger than any certificate, and four could
            // overflow a 32-bit `Int`.
            guard count > 0, count <= 3, bytes.distance(from: index, to: bytes.endIndex) >= count else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index = bytes.index(after: index)
            }
        }
        guard bytes.distance(from: index, to: bytes.endIndex) >= length else { return nil }
        let end = bytes.index(index, offsetBy: length)
        let element = Element(tag: tag, encoded: bytes[bytes.startIndex..<end], content: bytes[index..<end])
        bytes = bytes[end...]
        return element
    }
}

extension DERReader {
    /// The DER encoding of a certificate's `subjectPublicKeyInfo` (RFC 5280 §4.1), or `nil` when
    /// `certificate` is not a certificate: what a public-key pin hashes.
    static func subjectPublicKeyInfo(ofCertificate certificate: [UInt8]) -> ArraySlice<UInt8>? {
        var outer = DERReader(certificate[...])
        guard let certificateElement = outer.next(), certificateElement.tag == sequenceTag, outer.isAtEnd else {
            return nil
        }
        var fields = DERReader(certificateElement.content)
        guard let tbs = fields.next(), tbs.tag == sequenceTag else { return nil }
        var tbsFields = DERReader(tbs.content)
        // version [0] EXPLICIT (optional), serialNumber, signature, issuer, validity, subject,
        // then subjectPublicKeyInfo.
        guard var element = tbsFields.next() else { return nil }
        if element.tag == 0xA0 {
            guard let serial = tbsFields.next() else { return nil }
            element = serial
        }
        guard element.tag == 0x02 else { return nil }
        for _ in 0..<4 {
            guard let field = tbsFields.next(), field.tag == sequenceTag else { return nil }
        }
        guard let publicKeyInfo = tbsFields.next(), publicKeyInfo.tag == sequenceTag else { return nil }
        return publicKeyInfo.encoded
    }
}
