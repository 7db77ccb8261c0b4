import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``CookieStorage`` that keeps cookies in a Foundation `HTTPCookieStorage`, to share them with
/// other `URLSession` code, while reading `Set-Cookie` and choosing which cookies to send by
/// Courier's RFC 6265 rules rather than FoundationNetworking's.
///
/// On Linux, FoundationNetworking gets several of those rules wrong (see the README's cookie
/// section): it ignores `Max-Age` on ordinary cookies, reads only three `Expires` formats, accepts a
/// `Domain` such as `com`, defaults a cookie's path to `/`, and its `cookies(for:)` looks at the
/// host alone, sending `Secure` cookies over `http`, cookies of other paths, and expired ones. So
/// this adapter parses and validates each cookie as ``CookieJar`` does, writes the result into the
/// storage with `setCookie(_:)`, and, to build a `Cookie` header, filters the storage's cookies by
/// domain, path, `Secure` and expiry itself, ordered as RFC 6265 §5.4 says.
///
/// What the storage cannot hold is lost: `SameSite` is not recorded, a replaced cookie gets a new
/// creation time, last-access times are not kept, and there are no eviction limits. The storage's
/// `cookieAcceptPolicy` of `.never` is honoured (nothing is stored). Prefer ``CookieJar`` unless
/// the cookies must be shared with Foundation.
public final class HTTPCookieStorageAdapter: CookieStorage, CustomStringConvertible {
    /// The Foundation storage the cookies are kept in.
    public let storage: HTTPCookieStorage
    /// The public suffixes a `Set-Cookie`'s `Domain` may not name (see ``CookieJar``).
    public let publicSuffixes: PublicSuffixList

    /// An adapter over `storage`.
    ///
    /// - Parameters:
    ///   - storage: Where to keep cookies; `HTTPCookieStorage.shared` by default, which on Linux
    ///     FoundationNetworking also writes to a file in the user's home directory.
    ///   - publicSuffixes: The public suffixes a `Domain` may not name; the system's list by default.
    public init(_ storage: HTTPCookieStorage = .shared, publicSuffixes: PublicSuffixList = .system) {
        self.storage = storage
        self.publicSuffixes = publicSuffixes
        if publicSuffixes.isSystem { PublicSuffixList.startLoadingSystemRules }
    }

    /// Stores the cookies a response to `url` set, validated by Courier's rules (as
    /// ``CookieJar/store(setCookieFields:from:)``), into ``storage``.
    public func store(setCookieFields: [String], from url: URL) {
        guard storage.cookieAcceptPolicy != .never, let origin = CookieOrigin(url) else { return }
        let now = Date()
        for field in setCookieFields {
            guard let parsed = SetCookie.parse(field),
                let cookie = CookieJar.cookie(from: parsed, origin: origin, now: now, publicSuffixes: publicSuffixes)
            else { continue }
            // RFC 6265bis: a plain cookie from `http` may not shadow a stored `Secure` one.
            let stored = storage.cookies ?? []
            if !cookie.isSecure, !origin.isSecure,
                stored.contains(where: { Self.shadows(cookie, secureCookie: $0, now: now) })
            {
                continue
            }
            // Replace by name, domain and path, whether the old one was stored host-only or not
            // (FoundationNetworking keys `example.com` and `.example.com` apart).
            for old in stored
            where old.name == cookie.name && old.path == cookie.path && Self.domain(of: old) == cookie.domain {
                storage.deleteCookie(old)
            }
            guard !cookie.isExpired(at: now), let httpCookie = Self.httpCookie(cookie) else { continue }
            storage.setCookie(httpCookie)
        }
    }

    /// The `Cookie` header value for a request to `url`, from ``storage``'s cookies filtered and
    /// ordered by RFC 6265 §5.4, or `nil` when none applies.
    public func cookieHeader(for url: URL) -> String? {
        let cookies = cookies(for: url)
        guard !cookies.isEmpty else { return nil }
        return cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// The storage's cookies a request to `url` carries, in the order they are sent.
    public func cookies(for url: URL) -> [HTTPCookie] {
        guard let origin = CookieOrigin(url) else { return [] }
        let now = Date()
        let matches = (storage.cookies ?? []).filter { cookie in
            let domain = Self.domain(of: cookie)
            let isHostOnly = cookie.domain.utf8.first != UInt8(ascii: ".")
            // A domain cookie the storage took from elsewhere (FoundationNetworking accepts
            // `Domain=co.uk`) is not sent to every site under a public suffix either.
            let domainMatches =
                isHostOnly
                ? origin.host == domain
                : CookieMatching.domainMatches(host: origin.host, domain: domain)
                    && (domain == origin.host || !publicSuffixes.isPublicSuffix(domain))
            return domainMatches && (!cookie.isSecure || origin.isSecure)
                && (cookie.expiresDate.map { $0 > now } ?? true)
                && CookieMatching.pathMatches(requestPath: origin.path, cookiePath: cookie.path)
        }
        return matches.map { (cookie: $0, created: Self.creationTime(of: $0)) }
            .sorted { left, right in
                let leftLength = left.cookie.path.utf8.count
                let rightLength = right.cookie.path.utf8.count
                return leftLength != rightLength ? leftLength > rightLength : left.created < right.created
            }
            .map(\.cookie)
    }

    /// The storage's cookie count; never names or values.
    public var description: String {
        "HTTPCookieStorageAdapter(\(storage.cookies?.count ?? 0) cookies)"
    }

    // MARK: - Conversions

    /// The cookie's domain as Courier keeps it: lowercased, without the leading dot Foundation
    /// uses to mark a cookie that is not host-only.
    private static func domain(of cookie: HTTPCookie) -> String {
        var domain = Substring(cookie.domain).utf8
        if domain.first == UInt8(ascii: ".") { domain = domain.dropFirst() }
        return domain.asciiLowercased
    }

    /// Foundation's internal creation time (seconds since 2001), or 0 when it keeps none.
    private static func creationTime(of cookie: HTTPCookie) -> Double {
        let created = cookie.properties?[HTTPCookiePropertyKey("Created")]
        return (created as? Double) ?? (created as? NSNumber)?.doubleValue ?? 0
    }

    /// Whether `cookie`, set over plain `http`, would shadow `secureCookie` (RFC 6265bis §5.6, step 16).
    private static func shadows(_ cookie: Cookie, secureCookie: HTTPCookie, now: Date) -> Bool {
        let secureDomain = domain(of: secureCookie)
        return secureCookie.isSecure && secureCookie.name == cookie.name
            && (secureCookie.expiresDate.map { $0 > now } ?? true)
            && (CookieMatching.domainMatches(host: secureDomain, domain: cookie.domain)
                || CookieMatching.domainMatches(host: cookie.domain, domain: secureDomain))
            && CookieMatching.pathMatches(requestPath: cookie.path, cookiePath: secureCookie.path)
    }

    /// The Foundation cookie for `cookie`: a leading dot on the domain unless host-only, the
    /// expiry as a date (never `Max-Age`, which FoundationNetworking ignores on version 0 cookies).
    private static func httpCookie(_ cookie: Cookie) -> HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: cookie.name,
            .value: cookie.value,
            .domain: cookie.isHostOnly ? cookie.domain : "." + cookie.domain,
            .path: cookie.path,
            .version: "0",
        ]
        if let expiresAt = cookie.expiresAt {
            properties[.expires] = expiresAt
        } else {
            properties[.discard] = "TRUE"
        }
        if cookie.isSecure { properties[.secure] = "TRUE" }
        if cookie.isHTTPOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        return HTTPCookie(properties: properties)
    }
}
