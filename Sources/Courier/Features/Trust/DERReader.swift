import Foundation

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
    /// indefinite length, a length of more than three bytes, or one past the end.
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
    /// The fields of a certificate's `tbsCertificate` (RFC 5280 §4.1) that Courier reads.
    struct CertificateFields {
        let issuer: Element
        let validity: Element
        let subject: Element
        let subjectPublicKeyInfo: Element
    }

    /// The fields of `certificate`, or `nil` when it is not a certificate.
    static func fields(ofCertificate certificate: [UInt8]) -> CertificateFields? {
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
        var sequences: [Element] = []
        for _ in 0..<5 {
            guard let field = tbsFields.next(), field.tag == sequenceTag else { return nil }
            sequences.append(field)
        }
        return CertificateFields(
            issuer: sequences[1],
            validity: sequences[2],
            subject: sequences[3],
            subjectPublicKeyInfo: sequences[4]
        )
    }

    /// The DER encoding of a certificate's `subjectPublicKeyInfo`, or `nil` when `certificate`
    /// is not a certificate: what a public-key pin hashes.
    static func subjectPublicKeyInfo(ofCertificate certificate: [UInt8]) -> ArraySlice<UInt8>? {
        fields(ofCertificate: certificate)?.subjectPublicKeyInfo.encoded
    }

    /// The two dates of a `Validity` (`notBefore`, `notAfter`), each a `UTCTime` or
    /// `GeneralizedTime` in its DER form (`YYMMDDHHMMSSZ`, `YYYYMMDDHHMMSSZ`); `nil` if malformed.
    static func dates(ofValidity validity: Element) -> (notBefore: Date, notAfter: Date)? {
        var reader = DERReader(validity.content)
        guard let first = reader.next(), let second = reader.next(),
            let notBefore = date(first), let notAfter = date(second)
        else { return nil }
        return (notBefore, notAfter)
    }

    private static func date(_ element: Element) -> Date? {
        let digits = element.content.dropLast()
        guard element.content.last == UInt8(ascii: "Z"), digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        let numbers = digits.map { Int($0 - 0x30) }
        func number(_ offset: Int, _ count: Int) -> Int {
            numbers[offset..<offset + count].reduce(0) { $0 * 10 + $1 }
        }
        var components = DateComponents()
        switch (element.tag, numbers.count) {
        case (0x17, 12):  // UTCTime: 50–99 are 1950–1999 (RFC 5280 §4.1.2.5.1).
            let year = number(0, 2)
            components.year = year >= 50 ? 1900 + year : 2000 + year
        case (0x18, 14):
            components.year = number(0, 4)
        default:
            return nil
        }
        let rest = numbers.count - 10
        guard (1...12).contains(number(rest, 2)), (1...31).contains(number(rest + 2, 2)), number(rest + 4, 2) < 24,
            number(rest + 6, 2) < 60, number(rest + 8, 2) < 61
        else { return nil }
        components.month = number(rest, 2)
        components.day = number(rest + 2, 2)
        components.hour = number(rest + 4, 2)
        components.minute = number(rest + 6, 2)
        components.second = number(rest + 8, 2)
        guard let year = components.year, year >= 1 else { return nil }
        components.timeZone = TimeZone(identifier: "UTC")
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        // The calendar is lenient (February 31 becomes March 3): a date that does not read back
        // as written is no date.
        guard let date = calendar.date(from: components) else { return nil }
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        guard back.year == year, back.month == components.month, back.day == components.day else { return nil }
        return date
    }
}
