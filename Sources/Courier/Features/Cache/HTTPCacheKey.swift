import CourierHashes
import Foundation

/// How the cache names entries: a primary key of the method and the normalised URL, and the
/// request headers a response's `Vary` names, which a later request must repeat to be served it
/// (RFC 9111 §2 and §4.1).
///
/// One entry is kept per primary key: a response for another variant replaces it (RFC 9111
/// allows a cache to keep only the latest).
enum HTTPCacheKey {
    /// `METHOD scheme://host[:port]/path[?query]`: the scheme and host lowercased, a default port
    /// (80 for `http`, 443 for `https`) left out, an empty path written `/`, the fragment and
    /// user info dropped, path and query kept as sent (still percent-encoded). `nil` for a URL
    /// that is not `http` or `https` with a host.
    static func primary(method: String, url: URL) -> String? {
        normalisedURL(url).map { "\(method) \($0)" }
    }

    /// The URL part of ``primary(method:url:)``.
    static func normalisedURL(_ url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.percentEncodedHost?.lowercased(), !host.isEmpty
        else { return nil }
        var normalised = "\(scheme)://\(host)"
        if let port = components.port, port != (scheme == "https" ? 443 : 80) { normalised += ":\(port)" }
        let path = components.percentEncodedPath
        normalised += path.isEmpty ? "/" : path
        if let query = components.percentEncodedQuery { normalised += "?\(query)" }
        return normalised
    }

    /// Whether two URLs share an origin: scheme, host and (effective) port.
    static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        guard let first = origin(first), let second = origin(second) else { return false }
        return first == second
    }

    private static func origin(_ url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = components.percentEncodedHost?.lowercased()
        else { return nil }
        return "\(scheme)://\(host):\(components.port ?? (scheme == "https" ? 443 : 80))"
    }

    /// The header names `Vary` lists, lowercased, in order; `["*"]` when it holds `*`.
    static func varyNames(in headers: HTTPHeaders) -> [String] {
        guard let vary = headers.value(for: "Vary") else { return [] }
        var names: [String] = []
        for part in Substring(vary).utf8.split(separator: UInt8(ascii: ",")) {
            let name = part.trimmingHTTPWhitespace.asciiLowercased
            if name == "*" { return ["*"] }
            if !name.isEmpty, !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// The values of the request headers `names` (lowercased), normalised; a header the request
    /// does not have is left out, so that "absent" matches only "absent".
    static func selectedHeaders(_ names: [String], of requestHeaders: HTTPHeaders) -> [String: String] {
        var selected: [String: String] = [:]
        for name in names {
            if let value = requestHeaders.value(for: name) { selected[name] = normalisedValue(value) }
        }
        // Whatever `Vary` says, a response to one credential is never served to a request with
        // another, or with none: a session shared by several users must not hand one's data to
        // another. Kept as a digest, so no credential is ever stored.
        if let authorization = requestHeaders.value(for: "Authorization") {
            selected[authorizationFingerprintName] = SHA256.hexDigest(of: Array(authorization.utf8))
        }
        return selected
    }

    /// Where ``selectedHeaders(_:of:)`` keeps the request's `Authorization` digest: a name no
    /// header can have.
    static let authorizationFingerprintName = ":authorization"

    /// Whether a request with `requestHeaders` may be served a response stored with
    /// `responseHeaders` for a request whose `Vary`-named headers were `selected`. `Vary: *`
    /// never matches.
    static func varyMatches(
        responseHeaders: HTTPHeaders,
        selected: [String: String],
        requestHeaders: HTTPHeaders
    ) -> Bool {
        let names = varyNames(in: responseHeaders)
        if names == ["*"] { return false }
        return selectedHeaders(names, of: requestHeaders) == selected
    }

    /// `value` trimmed, with each run of spaces and tabs made one space, and a space after each
    /// comma: `gzip,  br` and `gzip, br` select the same variant (RFC 9111 §4.1 allows
    /// normalising whitespace).
    static func normalisedValue(_ value: String) -> String {
        var result: [UInt8] = []
        result.reserveCapacity(value.utf8.count)
        var pendingSpace = false
        for byte in value.utf8 {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                pendingSpace = true
                continue
            }
            if byte == UInt8(ascii: ",") {
                result.append(byte)
                pendingSpace = true
                continue
            }
            if pendingSpace, !result.isEmpty { result.append(UInt8(ascii: " ")) }
            pendingSpace = false
            result.append(byte)
        }
        return String(decoding: result, as: UTF8.self)
    }
}
