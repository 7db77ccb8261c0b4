import Foundation

/// One `Set-Cookie` field value read by the user-agent algorithm of RFC 6265 §5.2 (with the
/// limits of RFC 6265bis), before the cookie jar decides whether and how to store it.
///
/// The algorithm, not the server grammar: a user agent accepts what real servers send. The
/// name-value pair is everything before the first `;`, split at its first `=`, both sides trimmed
/// of spaces and tabs; each attribute after it is split the same way and matched by name
/// case-insensitively, the last of each name winning. Unknown attributes and attributes whose
/// value cannot be read are ignored, not the cookie.
///
/// The cookie itself is ignored (``parse(_:)`` returns `nil`) when the pair has no `=` or an empty
/// name (RFC 6265bis would keep a nameless cookie; Courier does not), when name and value
/// together exceed ``maximumNameValueLength`` bytes, or when the field holds a control character
/// other than a tab (RFC 6265bis §5.6, step 1: such a value was cut or forged on the way).
///
/// Server input: one pass over the field's bytes (the `Expires` date is a second pass over at most
/// ``maximumAttributeValueLength`` bytes); never fails other than by returning `nil`.
struct SetCookie: Sendable, Equatable {
    /// The most bytes a cookie's name and value may take together (RFC 6265bis §5.6).
    static let maximumNameValueLength = 4_096
    /// The most bytes an attribute's value may take; a longer one is ignored (RFC 6265bis §5.6).
    static let maximumAttributeValueLength = 1_024

    /// The cookie's name, as sent (case-sensitive).
    var name: String
    /// The cookie's value, as sent (quotes, if any, are part of it).
    var value: String
    /// The last readable `Expires`, if any.
    var expires: Date?
    /// The last readable `Max-Age` in seconds, if any: zero or less means "expire now". Saturates
    /// rather than overflows.
    var maxAge: Int64?
    /// The last non-empty `Domain`, its leading dot dropped and lowercased, if any.
    var domain: String?
    /// The last `Path` that starts with `/`, if any; otherwise the jar uses the request's default
    /// path (a later `Path` that does not start with `/` resets it to that default).
    var path: String?
    /// Whether `Secure` was given.
    var isSecure = false
    /// Whether `HttpOnly` was given.
    var isHTTPOnly = false
    /// The last recognised `SameSite`, if any.
    var sameSite: Cookie.SameSite?

    /// The cookie in one `Set-Cookie` field value, or `nil` if a user agent ignores it.
    static func parse(_ fieldValue: String) -> SetCookie? {
        parse(Array(fieldValue.utf8)[...])
    }

    private static func parse(_ bytes: ArraySlice<UInt8>) -> SetCookie? {
        // RFC 6265bis: a control character other than HTAB anywhere ignores the whole field.
        guard !bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }

        let pairEnd = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[bytes.startIndex..<pairEnd]
        guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let name = trimmed(pair[pair.startIndex..<equals])
        let value = trimmed(pair[(equals + 1)..<pair.endIndex])
        guard !name.isEmpty, name.count + value.count <= maximumNameValueLength else { return nil }

        var cookie = SetCookie(name: string(name), value: string(value))
        var index = pairEnd
        while index < bytes.endIndex {
            // `index` is at a ";": the attribute runs to the next one.
            let start = index + 1
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
            cookie.apply(attribute: bytes[start..<end])
            index = end
        }
        return cookie
    }

    /// Records one `cookie-av` (RFC 6265 §5.2, steps for each attribute name).
    private mutating func apply(attribute: ArraySlice<UInt8>) {
        let equals = attribute.firstIndex(of: UInt8(ascii: "=")) ?? attribute.endIndex
        let name = Self.trimmed(attribute[attribute.startIndex..<equals])
        let value = equals < attribute.endIndex ? Self.trimmed(attribute[(equals + 1)..<attribute.endIndex]) : []
        guard value.count <= Self.maximumAttributeValueLength else { return }

        switch Self.attributeName(name) {
        case .expires:
            if let date = CookieDate.parse(value) { expires = date }
        case .maxAge:
            if let seconds = Self.readMaxAge(value) { maxAge = seconds }
        case .domain:
            // An empty Domain is ignored (RFC 6265 §5.2.3); a leading dot is dropped.
            var domain = value
            if domain.first == UInt8(ascii: ".") { domain = domain.dropFirst() }
            guard !domain.isEmpty else { return }
            self.domain = Substring(Self.string(domain)).utf8.asciiLowercased
        case .path:
            path = value.first == UInt8(ascii: "/") ? Self.string(value) : nil
        case .secure:
            isSecure = true
        case .httpOnly:
            isHTTPOnly = true
        case .sameSite:
            switch Substring(Self.string(value)).utf8.asciiLowercased {
            case "strict": sameSite = .strict
            case "lax": sameSite = .lax
            case "none": sameSite = Cookie.SameSite.none
            default: break  // RFC 6265bis: an unknown value leaves the default enforcement.
            }
        case nil:
            break
        }
    }

    /// `Max-Age`: an optional `-` then digits, else ignored (RFC 6265 §5.2.2). Saturates at
    /// `Int64`'s range, so that any run of digits is read in one pass.
    private static func readMaxAge(_ value: ArraySlice<UInt8>) -> Int64? {
        var digits = value
        let isNegative = digits.first == UInt8(ascii: "-")
        if isNegative { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var seconds: Int64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflow1) = seconds.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            seconds = overflow1 || overflow2 ? Int64.max : sum
        }
        return isNegative ? -seconds : seconds
    }

    // MARK: - Pieces

    private enum AttributeName {
        case expires
        case maxAge
        case domain
        case path
        case secure
        case httpOnly
        case sameSite
    }

    /// The attribute named by `bytes`, compared case-insensitively; `nil` for one Courier ignores.
    private static func attributeName(_ bytes: ArraySlice<UInt8>) -> AttributeName? {
        // Names are 4 to 8 bytes: anything else is unknown without being lowercased.
        guard (4...8).contains(bytes.count) else { return nil }
        switch Substring(string(bytes)).utf8.asciiLowercased {
        case "expires": return .expires
        case "max-age": return .maxAge
        case "domain": return .domain
        case "path": return .path
        case "secure": return .secure
        case "httponly": return .httpOnly
        case "samesite": return .sameSite
        default: return nil
        }
    }

    /// The bytes without the spaces and tabs around them (RFC 6265's WSP).
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }),
            let last = bytes.lastIndex(where: { !isWhitespace($0) })
        else { return bytes[bytes.endIndex...] }
        return bytes[first...last]
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
