import Foundation

/// Courier's cookie store: keeps the cookies responses set and gives the `Cookie` header for each
/// request, by the storage model and retrieval rules of RFC 6265 §5.3-§5.4 (with RFC 6265bis's
/// `Secure` rules), identically on every platform and transport.
///
/// Storing (``store(setCookieFields:from:)``), for each `Set-Cookie`:
/// - a cookie without `Domain` is host-only: sent back to the request's host alone;
/// - a `Domain` must domain-match the request's host (`example.com` from `www.example.com`), or
///   the cookie is ignored; for an IP address it must be the address itself; a single label
///   (`com`, `localhost`) is accepted only from that very host, as a host-only cookie. A `Domain`
///   that is a public suffix (``PublicSuffixList``: `co.uk`, `github.io`) is ignored, or taken as
///   host-only from that very host; without a list (``PublicSuffixList/system`` where the system
///   installs none, as on Apple platforms) such a `Domain` is accepted, as a browser without its
///   list would;
/// - without a `Path` (or with one not starting with `/`), the path is the directory of the
///   request's path;
/// - a `Secure` cookie set over plain `http` is ignored, and so is a plain cookie set over `http`
///   that would shadow a `Secure` one of the same name; `__Secure-` and `__Host-` names get
///   their RFC 6265bis requirements;
/// - `Max-Age` wins over `Expires`; a date in the past, or `Max-Age` zero or less, removes the
///   cookie; a new cookie with the same name, domain and path replaces the old one and keeps its
///   creation time;
/// - past ``Limits``, expired cookies go first, then the least recently used of a domain over its
///   limit, then the least recently used of all.
///
/// Sending (``cookieHeader(for:)``): the cookies whose domain and path match the URL, `Secure`
/// ones only over `https` (plain `http` to `localhost` is not treated as secure), longer paths
/// first, then earlier created.
///
/// Thread-safe: its state is behind one lock, taken once per call, never while calling out.
/// Cookie values never appear in its ``description`` or in a ``Cookie``'s.
public final class CookieJar: CookieStorage, CustomStringConvertible {
    /// The limits the jar evicts cookies by.
    public let limits: Limits
    /// The public suffixes a `Domain` may not name.
    public let publicSuffixes: PublicSuffixList
    private let now: @Sendable () -> Date
    // The one guard of the jar's mutable state.
    private let state = Protected(State())

    /// An empty jar.
    ///
    /// - Parameters:
    ///   - limits: How many cookies to keep per domain and in all.
    ///   - publicSuffixes: The public suffixes a `Set-Cookie`'s `Domain` may not name; the
    ///     system's list by default (read the first time a cookie names a `Domain`).
    ///   - now: The clock expiry and access times are read from; tests pass a fixed one.
    public init(
        limits: Limits = Limits(),
        publicSuffixes: PublicSuffixList = .system,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.limits = limits
        self.publicSuffixes = publicSuffixes
        self.now = now
        if publicSuffixes.isSystem { PublicSuffixList.startLoadingSystemRules }
    }

    // MARK: - Storing

    /// Stores the cookies a response to `url` set, by RFC 6265 §5.3 (see ``CookieJar``); a
    /// `Set-Cookie` a user agent must ignore is ignored.
    public func store(setCookieFields: [String], from url: URL) {
        guard let origin = CookieOrigin(url) else { return }
        let now = self.now()
        let cookies = setCookieFields.compactMap { field in
            SetCookie.parse(field).flatMap {
                Self.cookie(from: $0, origin: origin, now: now, publicSuffixes: publicSuffixes)
            }
        }
        guard !cookies.isEmpty else { return }
        state.withLock { state in
            state.insert(cookies, from: origin, now: now)
            state.evict(now: now, limits: limits)
        }
    }

    /// The cookie a parsed `Set-Cookie` makes for a response from `origin` (§5.3, steps 3-10), or
    /// `nil` if it must be ignored.
    static func cookie(
        from setCookie: SetCookie,
        origin: CookieOrigin,
        now: Date,
        publicSuffixes: PublicSuffixList
    ) -> Cookie? {
        var expiresAt = setCookie.expires
        if let maxAge = setCookie.maxAge {
            expiresAt = maxAge <= 0 ? Date.distantPast : min(now.addingTimeInterval(Double(maxAge)), Date.distantFuture)
        }

        var domain = origin.host
        var isHostOnly = true
        if let attribute = setCookie.domain {
            if attribute == origin.host {
                // `Domain=` the host itself widens the cookie to its subdomains, except for an
                // address, a single label or a public suffix: there it is the same as no Domain.
                isHostOnly =
                    CookieMatching.isIPAddress(attribute) || !attribute.utf8.contains(UInt8(ascii: "."))
                    || publicSuffixes.isPublicSuffix(attribute)
            } else {
                // A single label (`com`) is a public suffix to any list; an address matches only
                // itself; a listed public suffix (`co.uk`) is no one's to set cookies for.
                guard attribute.utf8.contains(UInt8(ascii: ".")),
                    CookieMatching.domainMatches(host: origin.host, domain: attribute),
                    !publicSuffixes.isPublicSuffix(attribute)
                else { return nil }
                domain = attribute
                isHostOnly = false
            }
        }

        if setCookie.isSecure && !origin.isSecure { return nil }
        let path = setCookie.path ?? origin.defaultPath
        // RFC 6265bis §4.1.3: names that promise how the cookie was set.
        let name = Substring(setCookie.name).utf8
        if name.hasASCIICaseInsensitivePrefix("__Secure-"), !setCookie.isSecure { return nil }
        if name.hasASCIICaseInsensitivePrefix("__Host-"), !setCookie.isSecure || !isHostOnly || setCookie.path != "/" {
            return nil
        }
        return Cookie(
            name: setCookie.name,
            value: setCookie.value,
            domain: domain,
            path: path,
            expiresAt: expiresAt,
            createdAt: now,
            isHostOnly: isHostOnly,
            isSecure: setCookie.isSecure,
            isHTTPOnly: setCookie.isHTTPOnly,
            sameSite: setCookie.sameSite
        )
    }

    // MARK: - Sending

    /// The `Cookie` header value for a request to `url` (`a=1; b=2`), or `nil` when no cookie
    /// applies; the cookies sent count as used (their last-access time becomes now).
    public func cookieHeader(for url: URL) -> String? {
        let cookies = matching(url, markingAccess: true)
        guard !cookies.isEmpty else { return nil }
        return cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// The cookies a request to `url` would carry, in the order they would be sent. Does not
    /// count as a use.
    public func cookies(for url: URL) -> [Cookie] {
        matching(url, markingAccess: false)
    }

    private func matching(_ url: URL, markingAccess: Bool) -> [Cookie] {
        // Every request asks, and most jars hold nothing for it: an empty jar answers before the
        // URL is parsed or the clock read.
        guard !state.withLock({ $0.entries.isEmpty }), let origin = CookieOrigin(url) else { return [] }
        let now = self.now()
        return state.withLock { $0.matching(origin, now: now, markingAccess: markingAccess) }
    }

    // MARK: - Managing

    /// Every cookie the jar holds that has not expired, oldest first.
    public var allCookies: [Cookie] {
        let now = self.now()
        return state.withLock { state in
            state.entries.values.filter { !$0.cookie.isExpired(at: now) }.sorted { $0.creationOrder < $1.creationOrder }
                .map(\.cookie)
        }
    }

    /// Removes every cookie.
    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// Removes the cookie with this name, domain and path, if the jar holds one.
    ///
    /// - Parameters:
    ///   - name: The cookie's name (case-sensitive).
    ///   - domain: Its domain, compared case-insensitively; a leading dot is ignored.
    ///   - path: Its path, exactly.
    /// - Returns: Whether a cookie was removed.
    @discardableResult
    public func remove(name: String, domain: String, path: String) -> Bool {
        var domainBytes = Substring(domain).utf8
        if domainBytes.first == UInt8(ascii: ".") { domainBytes = domainBytes.dropFirst() }
        let key = CookieKey(name: name, domain: domainBytes.asciiLowercased, path: path)
        return state.withLock { $0.entries.removeValue(forKey: key) != nil }
    }

    /// How many cookies the jar holds; never their names or values.
    public var description: String {
        "CookieJar(\(state.withLock { $0.entries.count }) cookies)"
    }
}

/// What identifies a stored cookie: a new one with the same key replaces it (§5.3, step 11).
struct CookieKey: Hashable {
    let name: String
    let domain: String
    let path: String
}

extension Substring.UTF8View {
    /// Whether the bytes start with `prefix`, compared as `asciiLowercased` would.
    fileprivate func hasASCIICaseInsensitivePrefix(_ prefix: String) -> Bool {
        count >= prefix.utf8.count
            && self[startIndex..<index(startIndex, offsetBy: prefix.utf8.count)]
                .asciiLowercased == Substring(prefix).utf8.asciiLowercased
    }
}
