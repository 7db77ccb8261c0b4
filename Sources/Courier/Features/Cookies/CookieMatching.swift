import Foundation

/// The matching rules of RFC 6265 §5.1 a cookie jar applies: canonical hosts, domain-match,
/// default-path and path-match, and which schemes count as secure.
enum CookieMatching {
    /// The request's host, lowercased, without IPv6 brackets or a trailing dot; `nil` if the URL
    /// has none.
    static func canonicalHost(of url: URL) -> String? {
        guard var host = URLComponents(url: url, resolvingAgainstBaseURL: true)?.host, !host.isEmpty else {
            return nil
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        return Substring(host).utf8.asciiLowercased
    }

    /// The request's path as sent (percent-encoded), `/` when empty.
    static func requestPath(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    /// Whether `host` domain-matches `domain` (§5.1.3): the same, or a subdomain of it when `host`
    /// is a name rather than an IP address.
    static func domainMatches(host: String, domain: String) -> Bool {
        if host == domain { return true }
        // Bytes, not characters: String's comparison is Unicode-aware, a cookie's domain is not.
        let hostBytes = host.utf8
        let domainBytes = domain.utf8
        guard hostBytes.count > domainBytes.count, hostBytes.suffix(domainBytes.count).elementsEqual(domainBytes)
        else { return false }
        return hostBytes.dropLast(domainBytes.count).last == UInt8(ascii: ".") && !isIPAddress(host)
    }

    /// Whether `host` is an IPv4 address (four dotted decimal numbers) or an IPv6 address (it
    /// holds a `:`, which no name does).
    static func isIPAddress(_ host: String) -> Bool {
        if host.utf8.contains(UInt8(ascii: ":")) { return true }
        let parts = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                (1...3).contains(part.count) && part.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                    && (Int(Substring(part)) ?? 256) <= 255
            }
    }

    /// The default-path of a request path (§5.1.4): its directory, without the last `/`; `/` when
    /// there is no directory.
    static func defaultPath(of requestPath: String) -> String {
        // Bytes, not characters: a `/` followed by a combining mark is a different character.
        let bytes = requestPath.utf8
        guard bytes.first == UInt8(ascii: "/"), let lastSlash = bytes.lastIndex(of: UInt8(ascii: "/")),
            lastSlash != bytes.startIndex
        else { return "/" }
        return String(Substring(bytes[..<lastSlash]))
    }

    /// Whether `requestPath` path-matches `cookiePath` (§5.1.4): the same, or below it.
    static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
        let request = requestPath.utf8
        let cookie = cookiePath.utf8
        guard request.count >= cookie.count, request.prefix(cookie.count).elementsEqual(cookie) else { return false }
        if request.count == cookie.count || cookie.last == UInt8(ascii: "/") { return true }
        return request.dropFirst(cookie.count).first == UInt8(ascii: "/")
    }

    /// Whether the URL's scheme is one RFC 6265bis treats as secure: `https` or `wss`. A plain
    /// `http` URL never is, not even to `localhost`: Courier keeps the rule strict.
    static func isSecure(_ url: URL) -> Bool {
        switch Substring(url.scheme ?? "").utf8.asciiLowercased {
        case "https", "wss": true
        default: false
        }
    }
}
