import Foundation

/// Turns the URL argument into a URL as httpie does: `http://` is assumed when no scheme is given,
/// and `:8080/get` (a leading colon) means `localhost`.
enum RequestTarget {
    /// The characters a query name or value keeps unencoded: RFC 3986's unreserved set, so that
    /// `+`, `&`, `=` and spaces always reach the server as the user typed them.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )

    /// The URL `text` names, with `query` appended to any query it already has.
    ///
    /// - Throws: ``RequestItemError`` when the result is not an `http` or `https` URL with a host.
    static func url(from text: String, query: [(name: String, value: String)] = []) throws(RequestItemError) -> URL {
        var expanded = text
        if expanded.hasPrefix(":") {
            let rest = expanded.dropFirst()
            expanded = rest.first.map { $0.isNumber } == true ? "localhost:\(rest)" : "localhost\(rest)"
        }
        if !hasScheme(expanded) {
            expanded = "http://" + expanded
        }
        guard var components = URLComponents(string: expanded),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else {
            throw RequestItemError(item: text, reason: "it is not an http or https URL")
        }
        if !query.isEmpty {
            let added = query.map { encoded($0.name) + "=" + encoded($0.value) }.joined(separator: "&")
            let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
            components.percentEncodedQuery = existing + added
        }
        guard let url = components.url else {
            throw RequestItemError(item: text, reason: "it is not a valid URL")
        }
        return url
    }

    /// Whether `text` starts with a scheme and `://`. A `://` later on (in a query such as
    /// `redirect-to?url=http://…`) does not count: what precedes it must be a scheme alone
    /// (RFC 3986: a letter, then letters, digits, `+`, `-` or `.`).
    static func hasScheme(_ text: String) -> Bool {
        guard let separator = text.range(of: "://") else { return false }
        let scheme = text[..<separator.lowerBound].unicodeScalars
        guard let first = scheme.first, first.isASCII, CharacterSet.letters.contains(first) else { return false }
        return scheme.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0))
        }
    }

    /// `url` without its user info, and the user and password it held (percent-decoded), if any.
    static func splittingUserInfo(_ url: URL) -> (url: URL, credentials: (user: String, password: String)?) {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return (url, nil) }
        let user = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 } ?? ""
        let password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 } ?? ""
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        guard let stripped = components.url else { return (url, nil) }
        return (stripped, (user, password))
    }

    /// `text` percent-encoded for a query name or value.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
