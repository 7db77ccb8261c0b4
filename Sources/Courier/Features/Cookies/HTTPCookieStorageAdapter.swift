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
/// Past ``limits`` (``CookieJar/Limits``, as the jar's), once a response has stored its cookies,
/// expired cookies are deleted first, then the oldest of each domain it set cookies for that is
/// over its limit, then the oldest of all: a server cannot fill the storage (and the file
/// FoundationNetworking writes `HTTPCookieStorage.shared` to) without end. Without last-access
/// times in the storage, "oldest" is by creation time, where the jar evicts the least recently
/// used: a long-lived login cookie is among the first to go from a crowded domain, and on Linux,
/// where FoundationNetworking gives every cookie it loads from its file the time it was loaded,
/// the order among cookies from an earlier run is arbitrary. The total counts, and may evict,
/// cookies other code put in the storage.
///
/// Responses are stored one at a time, across every adapter, so that one response's deletions
/// never remove a cookie another has just set; code writing to the storage directly is not held back, and a cookie it
/// sets while a response is being stored may be deleted as the older one of its name.
///
/// What the storage cannot hold is lost: `SameSite` is not recorded, a replaced cookie gets a new
/// creation time, and last-access times are not kept. The storage's `cookieAcceptPolicy` of
/// `.never` is honoured (nothing is stored). Prefer ``CookieJar`` unless the cookies must be
/// shared with Foundation.
public final class HTTPCookieStorageAdapter: CookieStorage, CustomStringConvertible {
    /// The Foundation storage the cookies are kept in.
    public let storage: HTTPCookieStorage
    /// The public suffixes a `Set-Cookie`'s `Domain` may not name (see ``CookieJar``).
    public let publicSuffixes: PublicSuffixList
    /// How many cookies the storage keeps, per domain and in all, once a response has stored its own.
    public let limits: CookieJar.Limits
    /// Held while a response's cookies are stored, by every adapter (two sessions' adapters may
    /// share a storage, `.shared` by default): the storage is read, then written from what was
    /// read, and another response's writes in between would be undone. Nothing under it calls
    /// back into an adapter, unless a storage subclass does.
    private static let storing = Protected(())

    /// An adapter over `storage`.
    ///
    /// - Parameters:
    ///   - storage: Where to keep cookies; `HTTPCookieStorage.shared` by default, which on Linux
    ///     FoundationNetworking also writes to a file in the user's home directory.
    ///   - limits: How many cookies to keep per domain and in all; the jar's defaults (50 and
    ///     3,000). Cookies other code put in the storage count too, and may be evicted.
    ///   - publicSuffixes: The public suffixes a `Domain` may not name; the system's list by default.
    public init(
        _ storage: HTTPCookieStorage = .shared,
        limits: CookieJar.Limits = CookieJar.Limits(),
        publicSuffixes: PublicSuffixList = .system
    ) {
        self.storage = storage
        self.limits = limits
        self.publicSuffixes = publicSuffixes
        if publicSuffixes.isSystem { PublicSuffixList.startLoadingSystemRules }
    }

    /// Stores the cookies a response to `url` set, validated by Courier's rules (as
    /// ``CookieJar/store(setCookieFields:from:)``), into ``storage``, then evicts past ``limits``.
    public func store(setCookieFields: [String], from url: URL) {
        guard storage.cookieAcceptPolicy != .never, let origin = CookieOrigin(url) else { return }
        let now = Date()
        let cookies = setCookieFields.compactMap { field in
            SetCookie.parse(field).flatMap {
                CookieJar.cookie(from: $0, origin: origin, now: now, publicSuffixes: publicSuffixes)
            }
        }
        guard !cookies.isEmpty else { return }
        Self.storing.withLock { _ in store(cookies, origin: origin, now: now) }
    }

    /// Sets one response's `cookies`, then evicts; under `storing`.
    private func store(_ cookies: [Cookie], origin: CookieOrigin, now: Date) {
        // The storage read once per response and indexed, not scanned for each cookie: a
        // response of many `Set-Cookie` fields made that its count times the storage's size.
        // Keyed by name, domain and path, whether a cookie was stored host-only or not
        // (FoundationNetworking keys `example.com` and `.example.com` apart).
        var stored = Dictionary(grouping: storage.cookies ?? [], by: Key.init)
        // RFC 6265bis: a plain cookie from `http` may not shadow a stored `Secure` one.
        let secureByName =
            origin.isSecure
            ? [:] : Dictionary(grouping: stored.values.joined().filter(\.isSecure), by: \.name)
        // Whether a cookie shadows one depends on its name, domain and path alone: decided once
        // for each, however many fields repeat them.
        var shadowing: [Key: Bool] = [:]
        let admitted = cookies.filter { cookie in
            guard !cookie.isSecure, !origin.isSecure, let candidates = secureByName[cookie.name] else { return true }
            let key = Key(name: cookie.name, domain: cookie.domain, path: cookie.path)
            if let known = shadowing[key] { return !known }
            let shadows = candidates.contains { Self.shadows(cookie, secureCookie: $0, now: now) }
            shadowing[key] = shadows
            return !shadows
        }
        let kept = Self.survivors(of: admitted, now: now, limits: limits)
        // The order this response's cookies were set in: newer than anything stored, whatever
        // creation time (if any) the storage gives them.
        var setOrder: [ObjectIdentifier: Int] = [:]
        for (index, cookie) in admitted.enumerated() {
            let key = Key(name: cookie.name, domain: cookie.domain, path: cookie.path)
            for old in stored.removeValue(forKey: key) ?? [] { storage.deleteCookie(old) }
            guard kept.contains(index), let httpCookie = Self.httpCookie(cookie) else { continue }
            storage.setCookie(httpCookie)
            stored[key] = [httpCookie]
            setOrder[ObjectIdentifier(httpCookie)] = index
        }
        evict(
            stored.values.joined(),
            setOrder: setOrder,
            domainsSet: Set(admitted.lazy.map(\.domain)),
            now: now
        )
    }

    /// The indices of the cookies in `cookies`, one response's in order, that are still stored
    /// once it has been: the last of each name, domain and path, unexpired, and among those only
    /// the last ``limits`` allows per domain and in all (they are the newest, so eviction would
    /// take the earlier first). Only these are set: FoundationNetworking's storage costs its size
    /// for each cookie set, and a response of thousands would fill it before eviction emptied it.
    private static func survivors(of cookies: [Cookie], now: Date, limits: CookieJar.Limits) -> Set<Int> {
        var seen = Set<Key>()
        var perDomain: [String: Int] = [:]
        var kept = Set<Int>()
        for (index, cookie) in cookies.enumerated().reversed() {
            guard seen.insert(Key(name: cookie.name, domain: cookie.domain, path: cookie.path)).inserted,
                !cookie.isExpired(at: now), kept.count < limits.totalCookies,
                perDomain[cookie.domain, default: 0] < limits.cookiesPerDomain
            else { continue }
            perDomain[cookie.domain, default: 0] += 1
            kept.insert(index)
        }
        return kept
    }

    /// Deletes from the storage, of `cookies` (all it holds), the expired ones, then the oldest
    /// of each domain in `domainsSet` (those the response set cookies for) over its limit, then
    /// the oldest of all over the total (RFC 6265 §5.3, step 12). Those in `setOrder`, just set,
    /// are the newest, in its order. Other domains are left as they are: the response did not
    /// crowd them, and what else filled them is not this adapter's to undo.
    private func evict(
        _ cookies: some Sequence<HTTPCookie>,
        setOrder: [ObjectIdentifier: Int],
        domainsSet: Set<String>,
        now: Date
    ) {
        var kept: [HTTPCookie] = []
        for cookie in cookies {
            if cookie.expiresDate.map({ $0 <= now }) ?? false {
                storage.deleteCookie(cookie)
            } else {
                kept.append(cookie)
            }
        }
        let byDomain = Dictionary(grouping: kept, by: Self.domain(of:))
        let isCrowded = domainsSet.contains { (byDomain[$0]?.count ?? 0) > limits.cookiesPerDomain }
        guard isCrowded || kept.count > limits.totalCookies else { return }
        func age(of cookie: HTTPCookie) -> Age {
            if let order = setOrder[ObjectIdentifier(cookie)] { return Age(isNew: true, time: Double(order)) }
            return Age(isNew: false, time: Self.creationTime(of: cookie))
        }
        var remaining: [(cookie: HTTPCookie, created: Age)] = []
        for (domain, cookiesOfDomain) in byDomain {
            let byAge = cookiesOfDomain.map { (cookie: $0, created: age(of: $0)) }.sorted { $0.created < $1.created }
            let excess = domainsSet.contains(domain) ? max(0, byAge.count - limits.cookiesPerDomain) : 0
            for entry in byAge.prefix(excess) { storage.deleteCookie(entry.cookie) }
            remaining.append(contentsOf: byAge.dropFirst(excess))
        }
        guard remaining.count > limits.totalCookies else { return }
        remaining.sort { $0.created < $1.created }
        for entry in remaining.prefix(remaining.count - limits.totalCookies) { storage.deleteCookie(entry.cookie) }
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

    /// How old a cookie is, for eviction: those stored before by their creation time, then those
    /// this response set, in their order.
    private struct Age: Comparable {
        let isNew: Bool
        let time: Double

        static func < (left: Age, right: Age) -> Bool {
            left.isNew != right.isNew ? right.isNew : left.time < right.time
        }
    }

    // MARK: - Conversions

    /// A cookie's identity in the storage by Courier's rules: name, domain without Foundation's
    /// leading dot, and path.
    private struct Key: Hashable {
        let name: String
        let domain: String
        let path: String

        init(name: String, domain: String, path: String) {
            self.name = name
            self.domain = domain
            self.path = path
        }

        init(_ cookie: HTTPCookie) {
            self.init(name: cookie.name, domain: HTTPCookieStorageAdapter.domain(of: cookie), path: cookie.path)
        }
    }

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
