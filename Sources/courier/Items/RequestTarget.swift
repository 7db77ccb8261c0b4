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
        if !expanded.contains("://") {
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

    /// `text` percent-encoded for a query name or value.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
