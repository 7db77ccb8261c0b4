import Foundation

extension HTTPCachePolicy {
    /// The entry to store for `response` to `request` (sent at `requestTime`, its head received at
    /// `responseTime`), or `nil` when it must not be stored (RFC 9111 §3): a method other than
    /// `GET` or `HEAD`; mode ``RequestCacheMode/noStore``; `no-store` in the request or the
    /// response; a status that is neither heuristically cacheable nor given explicit freshness
    /// (`max-age`, `Expires`, `public`, `private`); a `Range` request or a `206`; `Vary: *`; a
    /// request with `Authorization` unless the response says `public`, `s-maxage` or
    /// `must-revalidate` (§3.5). `private` is fine: this is a private cache.
    func entryToStore(
        for request: HTTPCacheRequest,
        response: HTTPCacheResponseHead,
        requestTime: Date,
        responseTime: Date
    ) -> HTTPCacheEntry? {
        guard Self.isCacheableMethod(request.method), request.mode != .noStore,
            let key = HTTPCacheKey.primary(method: request.method, url: request.url),
            (200...599).contains(response.statusCode), response.statusCode != 206, response.statusCode != 304,
            request.headers.value(for: "Range") == nil
        else { return nil }
        let requestDirectives = CacheControl(requestHeaders: request.headers)
        let responseDirectives = CacheControl(responseHeaders: response.headers)
        guard !requestDirectives.noStore, !responseDirectives.noStore else { return nil }
        if request.headers.value(for: "Authorization") != nil,
            !responseDirectives.isPublic, responseDirectives.sharedMaxAge == nil, !responseDirectives.mustRevalidate
        {
            return nil
        }
        let explicit =
            responseDirectives.maxAge != nil || response.headers.value(for: "Expires") != nil
            || responseDirectives.isPublic || responseDirectives.isPrivate
        guard explicit || Self.heuristicallyCacheable.contains(response.statusCode) else { return nil }
        let varyNames = HTTPCacheKey.varyNames(in: response.headers)
        guard varyNames != ["*"] else { return nil }
        return HTTPCacheEntry(
            key: key,
            url: request.url,
            method: request.method,
            statusCode: response.statusCode,
            responseHeaders: Self.storableHeaders(response.headers),
            selectedRequestHeaders: HTTPCacheKey.selectedHeaders(varyNames, of: request.headers),
            requestTime: requestTime,
            responseTime: responseTime,
            bodyLength: 0
        )
    }

    /// `entry` updated by a `304 Not Modified` to a revalidation sent at `requestTime` and
    /// received at `responseTime` (RFC 9111 §4.3.4 and §3.2): each header of the `304` replaces
    /// the stored one, except the framing and hop-by-hop fields (`Content-Length`,
    /// `Content-Encoding`, `Transfer-Encoding`, `Content-Range`, `Connection` and those it names…),
    /// which describe the stored body; the age starts again from the new times: a `304` without
    /// `Date` dates the entry at its arrival (RFC 9110 §6.6.1), and one without `Age` leaves the
    /// stored `Age` behind (it told the old response's age). `nil` when the
    /// `304` names another representation (a strong `ETag` that is not the stored one's exactly,
    /// a weak one that does not match it by weak comparison, or another `Last-Modified`): then
    /// the stored body must not be used, and the request should be sent again without
    /// conditions. A `304` with no validator at all updates the entry: it answers the condition
    /// this cache sent for that one stored response, and browsers read it so too, where RFC 9111
    /// would have a stored response with validators kept as it was.
    func merging(
        notModified: HTTPCacheResponseHead,
        into entry: HTTPCacheEntry,
        requestTime: Date,
        responseTime: Date
    ) -> HTTPCacheEntry? {
        guard notModified.statusCode == 304 else { return nil }
        if let newTag = notModified.headers.value(for: "ETag") {
            // A strong tag names one exact representation, so only the same strong tag matches
            // it (§4.3.4); a weak one may update what it weakly matches.
            guard let storedTag = entry.entityTag,
                Self.isWeak(newTag) ? Self.weaklyMatch(newTag, storedTag) : Self.stronglyMatch(newTag, storedTag)
            else { return nil }
        } else if let newDate = notModified.headers.value(for: "Last-Modified"),
            let storedDate = entry.responseHeaders.value(for: "Last-Modified"),
            HTTPDate.parse(newDate) != HTTPDate.parse(storedDate)
        {
            return nil
        }
        var merged = entry
        let excluded = Self.excludedFromUpdate(notModified.headers)
        for header in notModified.headers where !excluded.contains(HTTPHeaders.key(for: header.name)) {
            merged.responseHeaders.update(header)
        }
        if notModified.headers.value(for: "Date") == nil {
            // Else the old Date against the new arrival time makes the entry as old as it was.
            merged.responseHeaders.remove(name: "Date")
            if let date = HTTPDate.format(responseTime) { merged.responseHeaders.update(name: "Date", value: date) }
        }
        if notModified.headers.value(for: "Age") == nil { merged.responseHeaders.remove(name: "Age") }
        merged.requestTime = requestTime
        merged.responseTime = responseTime
        return merged
    }

    /// `entry`, a stored `GET` response, updated by the `200` answering a `HEAD` request for it
    /// (RFC 9111 §4.3.5), as a `304` would update it; `nil` when the `HEAD` response may describe
    /// another representation: any of `ETag` (strong only), `Last-Modified` and `Content-Length`
    /// it sends differs from the stored response's, or it forbids storing (`no-store`), or it
    /// varies on other request headers.
    func freshening(
        _ entry: HTTPCacheEntry,
        withHeadResponse head: HTTPCacheResponseHead,
        requestTime: Date,
        responseTime: Date
    ) -> HTTPCacheEntry? {
        let headers = head.headers
        let stored = entry.responseHeaders
        if let tag = headers.value(for: "ETag") {
            guard let storedTag = entry.entityTag, Self.stronglyMatch(tag, storedTag) else { return nil }
        }
        if let modified = headers.value(for: "Last-Modified") {
            guard let date = HTTPDate.parse(modified), let storedModified = stored.value(for: "Last-Modified"),
                HTTPDate.parse(storedModified) == date
            else { return nil }
        }
        if let length = headers.value(for: "Content-Length")?.trimmingHTTPWhitespace {
            // A body that came chunked has no Content-Length stored, but its length is known
            // (unless it is still encoded, when the stored bytes are not what the header counts).
            let storedLength =
                stored.value(for: "Content-Length").map { String($0.trimmingHTTPWhitespace) }
                ?? (stored.value(for: "Content-Encoding") == nil ? String(entry.bodyLength) : nil)
            guard String(length) == storedLength else { return nil }
        }
        if CacheControl(responseHeaders: headers).noStore { return nil }
        if let vary = headers.value(for: "Vary"), vary != stored.value(for: "Vary") { return nil }
        var notModified = head
        notModified.statusCode = 304
        return merging(notModified: notModified, into: entry, requestTime: requestTime, responseTime: responseTime)
    }

    /// The primary keys an unsafe request's response invalidates (RFC 9111 §4.4): for a method
    /// other than `GET`, `HEAD`, `OPTIONS` and `TRACE` answered with a `2xx` or `3xx`, the `GET`
    /// and `HEAD` entries of the request's URL and of the `Location` and `Content-Location` URLs
    /// when they share its origin (a server may not invalidate another's entries).
    func invalidatedKeys(for request: HTTPCacheRequest, response: HTTPCacheResponseHead) -> [String] {
        guard !["GET", "HEAD", "OPTIONS", "TRACE"].contains(request.method), (200...399).contains(response.statusCode)
        else { return [] }
        var urls = [request.url]
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers.value(for: name)?.trimmingHTTPWhitespace, !value.isEmpty,
                let target = URL(string: String(value), relativeTo: request.url)?.absoluteURL,
                HTTPCacheKey.sameOrigin(target, request.url)
            else { continue }
            urls.append(target)
        }
        var keys: [String] = []
        for url in urls {
            for method in ["GET", "HEAD"] {
                if let key = HTTPCacheKey.primary(method: method, url: url), !keys.contains(key) { keys.append(key) }
            }
        }
        return keys
    }

    /// Fields never stored or updated: hop-by-hop (RFC 9111 §3.1) and those describing the
    /// stored body's framing and coding (§3.2), lowercased.
    static let framingAndHopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "content-length", "content-encoding", "content-range",
    ]

    /// Hop-by-hop fields (RFC 9111 §3.1): `Connection` and the fields it names, and the rest.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
    ]

    /// `headers` without the hop-by-hop fields, which describe one connection, not the response.
    static func storableHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        // Nor `Set-Cookie`: replayed from the store, an old session cookie would come back
        // after a logout or a rotation.
        let excluded = hopByHop.union(connectionOptions(headers)).union(cookieFields)
        return HTTPHeaders(headers.filter { !excluded.contains(HTTPHeaders.key(for: $0.name)) })
    }

    /// The lowercased names a `304` must not update in a stored entry.
    private static func excludedFromUpdate(_ headers: HTTPHeaders) -> Set<String> {
        framingAndHopByHop.union(connectionOptions(headers)).union(cookieFields)
    }

    /// The fields that set cookies, never stored (lowercased).
    static let cookieFields: Set<String> = ["set-cookie", "set-cookie2"]

    /// The field names `Connection` lists, lowercased.
    private static func connectionOptions(_ headers: HTTPHeaders) -> Set<String> {
        guard let connection = headers.value(for: "Connection") else { return [] }
        return Set(
            Substring(connection).utf8.split(separator: UInt8(ascii: ",")).map(\.trimmingHTTPWhitespace.asciiLowercased)
        )
    }

    /// Whether an entity tag is marked weak (`W/`).
    static func isWeak(_ tag: String) -> Bool {
        tag.trimmingHTTPWhitespace.hasPrefix("W/")
    }

    /// Strong comparison of two entity tags (RFC 9110 §8.8.3.2): neither weak, and the same
    /// opaque tag.
    static func stronglyMatch(_ first: String, _ second: String) -> Bool {
        let left = first.trimmingHTTPWhitespace
        return !left.isEmpty && !isWeak(first) && left == second.trimmingHTTPWhitespace
    }

    /// Weak comparison of two entity tags (RFC 9110 §8.8.3.2): equal opaque tags, either or both
    /// marked weak (`W/`).
    static func weaklyMatch(_ first: String, _ second: String) -> Bool {
        func opaque(_ tag: String) -> Substring {
            let trimmed = tag.trimmingHTTPWhitespace
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        let left = opaque(first)
        return !left.isEmpty && left == opaque(second)
    }
}
