import Foundation

/// A cookie a ``CookieJar`` holds: what a server set with `Set-Cookie`, after the jar applied
/// RFC 6265's storage rules (§5.3) to it.
///
/// Its ``description`` never shows the ``value``: a cookie is usually a credential, and
/// descriptions end up in logs.
public struct Cookie: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The cookie's name (case-sensitive).
    public var name: String
    /// The cookie's value, exactly as the server sent it.
    public var value: String
    /// The host the cookie belongs to, lowercased: the request's host for a host-only cookie,
    /// otherwise the `Domain` attribute (without its leading dot).
    public var domain: String
    /// The path the cookie applies to and below: the `Path` attribute, or the directory of the
    /// request's path when there was none.
    public var path: String
    /// When the cookie expires, or `nil` for a session cookie (kept until the jar is emptied).
    public var expiresAt: Date?
    /// When the jar first stored a cookie of this name, domain and path; a replacement keeps it.
    public var createdAt: Date
    /// When the cookie was last sent on a request (or stored, if never sent).
    public var lastAccessedAt: Date
    /// Whether the cookie is sent to ``domain`` only, not to its subdomains (no `Domain` attribute).
    public var isHostOnly: Bool
    /// Whether the cookie is sent over `https` (and `wss`) only (`Secure`).
    public var isSecure: Bool
    /// Whether the server marked the cookie `HttpOnly`. Recorded only: Courier has no script API
    /// for the flag to restrict.
    public var isHTTPOnly: Bool
    /// The `SameSite` the server gave, if any. Recorded only: a client library has no notion of
    /// the site a request is made from, so Courier sends cookies the same way whatever it is.
    public var sameSite: SameSite?

    /// A cookie with every field given; the jar makes these itself, from `Set-Cookie` values.
    public init(
        name: String,
        value: String,
        domain: String,
        path: String,
        expiresAt: Date? = nil,
        createdAt: Date,
        lastAccessedAt: Date? = nil,
        isHostOnly: Bool = true,
        isSecure: Bool = false,
        isHTTPOnly: Bool = false,
        sameSite: SameSite? = nil
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.path = path
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.lastAccessedAt = lastAccessedAt ?? createdAt
        self.isHostOnly = isHostOnly
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
    }

    /// Whether the cookie has expired at `date`. A session cookie never does.
    public func isExpired(at date: Date) -> Bool {
        expiresAt.map { $0 <= date } ?? false
    }

    /// The name, domain, path and flags; the value is redacted.
    public var description: String {
        var text = "Cookie(\(name)=<redacted>; domain=\(domain)\(isHostOnly ? " (host-only)" : ""); path=\(path)"
        if let expiresAt { text += "; expires=\(expiresAt)" }
        if isSecure { text += "; Secure" }
        if isHTTPOnly { text += "; HttpOnly" }
        if let sameSite { text += "; SameSite=\(sameSite)" }
        return text + ")"
    }

    /// The fields ``description`` shows, for `dump` and debuggers: the value is left out.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name, "value": "<redacted>", "domain": domain, "path": path, "expiresAt": expiresAt as Any,
                "isHostOnly": isHostOnly, "isSecure": isSecure, "isHTTPOnly": isHTTPOnly, "sameSite": sameSite as Any,
            ],
            displayStyle: .struct
        )
    }
}
