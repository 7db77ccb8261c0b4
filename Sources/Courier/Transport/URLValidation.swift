import Foundation

/// The check every URL passes before a transport sees it: scheme `http` or `https`, a host, and
/// a port from 0 to 65535.
///
/// Why Courier checks rather than trusting the transport: SwiftNIO traps (kills the process) on a
/// port above 65535, and Foundation's `URL` accepts `http://127.0.0.1:65536/` as it is, so a
/// server could crash a client with one redirect. A port too long for an `Int` reads as no port at
/// all (`URL.port` is `nil`), which would silently send the request to port 80. Both are refused
/// here, from the URL's text, whatever `URL` made of it.
///
/// ``Session`` calls it for every request it sends, and the request core for every redirect's
/// `Location` (transports follow none); a transport driven without a session calls it itself.
@_spi(CourierTransport)
public enum URLValidation {
    /// The schemes Courier sends requests to.
    public static let supportedSchemes: Set<String> = ["http", "https"]

    /// `nil` when `url` can be handed to a transport, else the ``CourierError`` (of kind
    /// ``CourierError/Kind/invalidURL``) that says why not. The URL in the error has its user
    /// info removed.
    public static func problem(with url: URL) -> CourierError? {
        let text = url.absoluteString
        guard let reason = reason(rejecting: url, text: text) else { return nil }
        return .invalidURL(text, reason: reason)
    }

    /// Why `url`, whose text is `text`, cannot be sent, or `nil`: the text's checks, then the
    /// decoded host's and port's unless the host is plain (letters, digits, `-`, `.`, `_`, `~`),
    /// which `URL` decodes to itself. Reading the decoded parts costs `URL` some 2,000
    /// instructions.
    static func reason(rejecting url: URL, text: String) -> String? {
        var text = text
        let (reason, hostIsPlain) = text.withUTF8 { Self.verdict(onBytes: $0) }
        if let reason { return reason }
        return hostIsPlain ? nil : Self.reason(rejectingDecodedPartsOf: url)
    }

    /// Why the host and port as `URL` decodes them (which is how AsyncHTTPClient reads them)
    /// cannot be sent, or `nil`: the text may be fine while its decoding is not (`%5B%5D` decodes
    /// to `[]`, which AsyncHTTPClient strips to an empty host and traps on).
    static func reason(rejectingDecodedPartsOf url: URL) -> String? {
        guard let host = url.host, !host.isEmpty else { return "it has no host" }
        // Bytes, not `String.contains(_:)`: with Foundation imported that is `NSString`'s
        // `range(of:)`, some 20,000 instructions a request on Linux.
        for byte in host.utf8 {
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") { return "its host contains a bracket" }
            if byte <= 0x20 || byte == 0x7F { return "its host contains a space or a control character" }
        }
        if let port = url.port, !(0...65_535).contains(port) { return "its port is above 65535" }
        return nil
    }

    /// Why `text` (an absolute URL) cannot be sent, or `nil` if it can. Reads the authority
    /// from the text itself, in one pass: `URL`'s own accessors hide an overflowing port.
    static func reason(rejecting text: String) -> String? {
        var text = text
        return text.withUTF8 { verdict(onBytes: $0).reason }
    }

    /// Whether `byte` may stand in a host that `URL` reads as it is: an ASCII letter or digit,
    /// `-`, `.`, `_` or `~`.
    private static func isPlainHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Why the URL in `utf8` cannot be sent (`nil` if it can), and whether its host is plain.
    /// Read in place, with no copy: every request's URL comes through here.
    private static func verdict(onBytes utf8: UnsafeBufferPointer<UInt8>) -> (reason: String?, hostIsPlain: Bool) {
        func rejected(_ reason: String) -> (reason: String?, hostIsPlain: Bool) { (reason, false) }
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return rejected("it has no scheme") }
        let scheme = utf8[..<colon]
        guard isSupportedScheme(scheme) else {
            let name = String(decoding: scheme, as: UTF8.self).lowercased()
            return rejected(name.isEmpty ? "it has no scheme" : "the scheme \"\(name)\" is not http or https")
        }
        var index = colon + 1
        guard utf8.count >= index + 2, utf8[index] == UInt8(ascii: "/"), utf8[index + 1] == UInt8(ascii: "/") else {
            return rejected("it has no host")
        }
        index += 2
        var end = index
        scan: while end < utf8.count {
            switch utf8[end] {
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): break scan
            default: end += 1
            }
        }
        var authority = utf8[index..<end]
        // User info ends at the last "@"; it is never part of the host or port.
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            authority = authority[(at + 1)...]
        }
        let host: Slice<UnsafeBufferPointer<UInt8>>
        let port: Slice<UnsafeBufferPointer<UInt8>>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                return rejected("its IPv6 host has no \"]\"")
            }
            host = authority[authority.startIndex...close]
            let rest = authority[(close + 1)...]
            if rest.isEmpty {
                port = nil
            } else if rest.first == UInt8(ascii: ":") {
                port = rest.dropFirst()
            } else {
                return rejected("its host is followed by something that is not a port")
            }
            guard host.count > 2 else { return rejected("it has no host") }
        } else if let portColon = authority.lastIndex(of: UInt8(ascii: ":")) {
            host = authority[..<portColon]
            port = authority[(portColon + 1)...]
        } else {
            host = authority
            port = nil
        }
        guard !host.isEmpty else { return rejected("it has no host") }
        if let byte = host.first(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return rejected(byte == 0x20 ? "its host contains a space" : "its host contains a control character")
        }
        if let port, !port.isEmpty {
            guard port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return rejected("its port is not a number")
            }
            // Leading zeros are allowed (RFC 3986), so count the value, not the digits.
            var value = 0
            for digit in port {
                value = value * 10 + Int(digit - UInt8(ascii: "0"))
                if value > 65_535 { return rejected("its port is above 65535") }
            }
        }
        return (nil, host.first != UInt8(ascii: "[") && host.allSatisfy(isPlainHostByte))
    }

    /// Whether `scheme` is one of ``supportedSchemes`` (`http`, `https`), in any case, read
    /// without making a string of it.
    private static func isSupportedScheme(_ scheme: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        // Setting the 0x20 bit lowercases an ASCII letter, and makes no other byte one of
        // `h`, `t`, `p` or `s`.
        let lowered = scheme.lazy.map { $0 | 0x20 }
        return lowered.elementsEqual("http".utf8) || lowered.elementsEqual("https".utf8)
    }
}
