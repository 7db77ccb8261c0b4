import Foundation

/// What RFC 6265 needs to know of a request URL to store or send cookies: its canonical host,
/// its path and default-path, and whether its scheme is secure.
struct CookieOrigin: Sendable, Equatable {
    /// The host, lowercased, without IPv6 brackets or a trailing dot.
    let host: String
    /// The path as sent, percent-encoded; `/` when empty.
    let path: String
    /// The directory of ``path``: where a cookie without `Path` applies.
    let defaultPath: String
    /// Whether the scheme is `https` or `wss`.
    let isSecure: Bool

    /// The origin of `url`, or `nil` if it has no host (no cookie is stored or sent for it).
    init?(_ url: URL) {
        guard let host = CookieMatching.canonicalHost(of: url) else { return nil }
        self.host = host
        self.path = CookieMatching.requestPath(of: url)
        self.defaultPath = CookieMatching.defaultPath(of: path)
        self.isSecure = CookieMatching.isSecure(url)
    }
}
