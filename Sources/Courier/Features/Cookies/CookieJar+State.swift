import Foundation

extension CookieJar {
    /// The jar's cookies and counters, changed only under the jar's lock. Pure: the clock is read
    /// by the jar and passed in.
    struct State: Sendable {
        /// A stored cookie and the order numbers that break ties between equal times.
        struct Entry: Sendable {
            var cookie: Cookie
            /// Kept across replacement, as the creation time is: orders the `Cookie` header.
            var creationOrder: UInt64
            /// Renewed on each store and each send: eviction removes the lowest first.
            var accessOrder: UInt64
        }

        var entries: [CookieKey: Entry] = [:]
        private var counter: UInt64 = 0

        private mutating func nextOrder() -> UInt64 {
            counter += 1
            return counter
        }

        /// Stores `cookie`, set by a response from `origin` (§5.3, steps 11-12, and RFC 6265bis's
        /// rule that a plain `http` response cannot shadow a `Secure` cookie).
        mutating func insert(_ cookies: [Cookie], from origin: CookieOrigin, now: Date) {
            // Looked up by name, gathered once per response rather than scanned for each cookie,
            // which a hostile response of many fields made quadratic. No cookie of a plain
            // `http` response adds or replaces a `Secure` one: one marked `Secure` is refused
            // before it gets here, and a plain one that would replace one shadows it.
            let secureByName =
                origin.isSecure
                ? [:] : Dictionary(grouping: entries.values.lazy.map(\.cookie).filter(\.isSecure), by: \.name)
            for cookie in cookies { insert(cookie, from: origin, now: now, secureByName: secureByName) }
        }

        private mutating func insert(
            _ cookie: Cookie,
            from origin: CookieOrigin,
            now: Date,
            secureByName: [String: [Cookie]]
        ) {
            if !cookie.isSecure, !origin.isSecure,
                Self.shadowsSecureCookie(cookie, among: secureByName[cookie.name] ?? [], now: now)
            {
                return
            }
            let key = CookieKey(name: cookie.name, domain: cookie.domain, path: cookie.path)
            var cookie = cookie
            var creationOrder: UInt64?
            if let old = entries.removeValue(forKey: key) {
                cookie.createdAt = old.cookie.createdAt
                creationOrder = old.creationOrder
            }
            // A cookie already expired only deletes the one it replaces.
            guard !cookie.isExpired(at: now) else { return }
            cookie.lastAccessedAt = now
            let order = nextOrder()
            entries[key] = Entry(cookie: cookie, creationOrder: creationOrder ?? order, accessOrder: order)
        }

        /// Whether one of `secure`, the stored `Secure` cookies of the same name, is for a domain
        /// that domain-matches the new one's (either way round) and a path the new one's path-matches.
        private static func shadowsSecureCookie(_ cookie: Cookie, among secure: [Cookie], now: Date) -> Bool {
            secure.contains { old in
                old.isSecure && old.name == cookie.name && !old.isExpired(at: now)
                    && (CookieMatching.domainMatches(host: old.domain, domain: cookie.domain)
                        || CookieMatching.domainMatches(host: cookie.domain, domain: old.domain))
                    && CookieMatching.pathMatches(requestPath: cookie.path, cookiePath: old.path)
            }
        }

        /// Removes expired cookies, then the least recently used of each domain over its limit,
        /// then the least recently used of all over the total (§5.3, step 12).
        mutating func evict(now: Date, limits: Limits) {
            entries = entries.filter { !$0.value.cookie.isExpired(at: now) }
            var perDomain: [String: Int] = [:]
            for key in entries.keys { perDomain[key.domain, default: 0] += 1 }
            let crowded = perDomain.filter { $0.value > limits.cookiesPerDomain }
            for (domain, count) in crowded {
                let oldest = entries.filter { $0.key.domain == domain }.sorted {
                    $0.value.accessOrder < $1.value.accessOrder
                }
                for (key, _) in oldest.prefix(count - limits.cookiesPerDomain) { entries.removeValue(forKey: key) }
            }
            if entries.count > limits.totalCookies {
                let oldest = entries.sorted { $0.value.accessOrder < $1.value.accessOrder }
                for (key, _) in oldest.prefix(entries.count - limits.totalCookies) { entries.removeValue(forKey: key) }
            }
        }

        /// The unexpired cookies a request to `origin` carries, longer paths first, then earlier
        /// created (§5.4); when `markingAccess`, they count as used now.
        mutating func matching(_ origin: CookieOrigin, now: Date, markingAccess: Bool) -> [Cookie] {
            var matches: [(key: CookieKey, entry: Entry)] = []
            for (key, entry) in entries {
                let cookie = entry.cookie
                let domainMatches =
                    cookie.isHostOnly
                    ? origin.host == cookie.domain
                    : CookieMatching.domainMatches(host: origin.host, domain: cookie.domain)
                guard domainMatches, !cookie.isExpired(at: now), !cookie.isSecure || origin.isSecure,
                    CookieMatching.pathMatches(requestPath: origin.path, cookiePath: cookie.path)
                else { continue }
                matches.append((key, entry))
            }
            matches.sort { left, right in
                let leftLength = left.entry.cookie.path.utf8.count
                let rightLength = right.entry.cookie.path.utf8.count
                if leftLength != rightLength { return leftLength > rightLength }
                return left.entry.creationOrder < right.entry.creationOrder
            }
            if markingAccess {
                for (key, _) in matches {
                    let order = nextOrder()
                    entries[key]?.cookie.lastAccessedAt = now
                    entries[key]?.accessOrder = order
                }
            }
            return matches.map { markingAccess ? (entries[$0.key]?.cookie ?? $0.entry.cookie) : $0.entry.cookie }
        }
    }
}
