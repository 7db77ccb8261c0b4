/// One challenge of a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 §11.6.1,
/// §11.7.1): an authentication scheme with either a token68 or parameters.
///
/// A server may send several challenges, in one field or in several (read one at a time where
/// the transport keeps them apart, else joined with `", "`); ``parse(_:)`` reads them all, so that a client can answer the strongest scheme
/// it supports rather than the first one listed. The grammar is the RFC's:
///
/// ```
/// challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
/// auth-param = token BWS "=" BWS ( token / quoted-string )
/// ```
///
/// A comma separates both challenges and parameters: what follows one is another parameter if
/// it reads `name =`, else the next challenge.
///
/// Server input: the parse is linear in the field's length, whatever it holds (each byte is
/// read a bounded number of times), and never fails as a whole. A challenge it cannot read (a
/// scheme that is not a token, a parameter without `=`, an unterminated quoted string) is
/// skipped up to the next comma; a challenge that names one parameter twice is dropped, since
/// its meaning is ambiguous (RFC 9110 says each name occurs at most once).
struct AuthenticationChallenge: Sendable, Equatable {
    /// The scheme as sent (`Digest`, `Basic`, `Bearer`); compare it case-insensitively.
    let scheme: String
    /// The token68 that follows the scheme, for schemes that take one (`Negotiate`).
    let token68: String?
    /// The parameters by name, names lowercased (they are case-insensitive), quoted values
    /// unquoted and unescaped.
    let parameters: [String: String]

    /// The value of the parameter `name`, compared case-insensitively.
    func parameter(_ name: String) -> String? {
        parameters[HTTPHeaders.key(for: name)]
    }

    /// Whether the scheme is `name`, compared case-insensitively.
    func hasScheme(_ name: String) -> Bool {
        HTTPHeaders.namesMatch(scheme, name)
    }

    /// The challenges in `fieldValue`, in order; those that cannot be read are left out.
    static func parse(_ fieldValue: String) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        var reader = ChallengeReader(Array(fieldValue.utf8))
        while let challenge = reader.nextChallenge() {
            if let challenge = challenge.value { challenges.append(challenge) }
        }
        return challenges
    }
}

/// Reads challenges from a field value's bytes, front to back, never backing up further than the
/// one parameter name it looks ahead at.
private struct ChallengeReader {
    /// What reading one challenge gave: a challenge, or nothing readable before the next comma.
    struct Read {
        let value: AuthenticationChallenge?
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The next challenge, or `nil` at the end of the field.
    mutating func nextChallenge() -> Read? {
        skipListSeparators()
        guard index < bytes.count else { return nil }
        guard let scheme = readToken() else {
            skipPastComma()
            return Read(value: nil)
        }
        // The scheme alone (`Negotiate`, or a list of bare schemes).
        let spaces = skipWhitespace()
        if index >= bytes.count || bytes[index] == UInt8(ascii: ",") {
            return Read(value: AuthenticationChallenge(scheme: scheme, token68: nil, parameters: [:]))
        }
        guard spaces > 0 else {
            skipPastComma()
            return Read(value: nil)
        }
        if let token68 = readToken68() {
            return Read(value: AuthenticationChallenge(scheme: scheme, token68: token68, parameters: [:]))
        }
        var parameters: [String: String] = [:]
        var isAmbiguous = false
        while true {
            guard let (name, value) = readParameter() else {
                skipPastComma()
                return Read(value: nil)
            }
            if parameters.updateValue(value, forKey: name) != nil { isAmbiguous = true }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { break }
            // After a comma: another parameter of this challenge if `name =` follows, else the
            // next challenge (left for the next call).
            let comma = index
            skipListSeparators()
            guard startsParameter() else {
                index = comma
                break
            }
        }
        guard index >= bytes.count || bytes[index] == UInt8(ascii: ",") else {
            skipPastComma()
            return Read(value: nil)
        }
        let challenge = AuthenticationChallenge(scheme: scheme, token68: nil, parameters: parameters)
        return Read(value: isAmbiguous ? nil : challenge)
    }

    // MARK: - Pieces

    /// `token BWS "=" BWS ( token / quoted-string )`, the name lowercased; `nil` (having read
    /// part of it) if the bytes are not one.
    private mutating func readParameter() -> (name: String, value: String)? {
        guard let name = readToken() else { return nil }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
        index += 1
        skipWhitespace()
        guard let value = readQuotedString() ?? readToken() else { return nil }
        return (HTTPHeaders.key(for: name), value)
    }

    /// Whether a parameter starts here (`token BWS "="`), without reading it. Reads at most the
    /// token and the whitespace after it, which the parameter's own read then reads again.
    private func startsParameter() -> Bool {
        var position = index
        while position < bytes.count, Self.isTokenByte(bytes[position]) { position += 1 }
        guard position > index else { return false }
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        return position < bytes.count && bytes[position] == UInt8(ascii: "=")
    }

    /// A token68 that makes up the rest of the challenge (followed only by whitespace, then a
    /// comma or the end), or `nil`, reading nothing.
    private mutating func readToken68() -> String? {
        var position = index
        while position < bytes.count, Self.isToken68Byte(bytes[position]) { position += 1 }
        guard position > index else { return nil }
        while position < bytes.count, bytes[position] == UInt8(ascii: "=") { position += 1 }
        var end = position
        while end < bytes.count, Self.isWhitespace(bytes[end]) { end += 1 }
        guard end == bytes.count || bytes[end] == UInt8(ascii: ",") else { return nil }
        // `name=` with nothing after is a token68 ending in "="; `name=value` is a parameter.
        let token68 = String(decoding: bytes[index..<position], as: UTF8.self)
        index = end
        return token68
    }

    /// A token (RFC 9110 §5.6.2), or `nil`, reading nothing.
    private mutating func readToken() -> String? {
        let start = index
        while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
        guard index > start else { return nil }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A quoted string (RFC 9110 §5.6.4), unquoted and unescaped; `nil` reading nothing if none
    /// starts here, or `nil` having read to the end if it is not closed.
    private mutating func readQuotedString() -> String? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        var value: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                value.append(bytes[index])
                index += 1
            default:
                value.append(byte)
            }
        }
        return nil
    }

    /// Skips spaces and tabs; returns how many.
    @discardableResult
    private mutating func skipWhitespace() -> Int {
        let start = index
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
        return index - start
    }

    /// Skips whitespace and commas (a list may hold empty elements).
    private mutating func skipListSeparators() {
        while index < bytes.count, Self.isWhitespace(bytes[index]) || bytes[index] == UInt8(ascii: ",") {
            index += 1
        }
    }

    /// Skips what cannot be read, up to and including the next comma outside a quoted string.
    private mutating func skipPastComma() {
        var isQuoted = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if isQuoted {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    isQuoted = false
                }
            } else if byte == UInt8(ascii: "\"") {
                isQuoted = true
            } else if byte == UInt8(ascii: ",") {
                return
            }
        }
    }

    // MARK: - Byte classes

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// RFC 9110 `tchar`, as a method's name is checked.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        HTTPMethod.isTokenCharacter(byte)
    }

    /// The bytes of a token68 before its trailing `=`s: letters, digits, `-._~+/`.
    private static func isToken68Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }
}
