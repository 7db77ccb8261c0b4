import Foundation

/// The rules of a private HTTP cache (RFC 9111, with RFC 5861's `stale-while-revalidate` and
/// `stale-if-error`), as pure decisions: no I/O, no clock (`now` is passed in), no storage.
///
/// ``HTTPCache`` applies them to what its store holds. This file decides whether and how a
/// stored response serves a request; `HTTPCachePolicy+Storage.swift` decides what is stored,
/// merges a `304` and lists what an unsafe method invalidates.
struct HTTPCachePolicy: Sendable {
    /// Whether a response without an explicit lifetime gets a heuristic one: 10 % of the time
    /// since its `Last-Modified`, for URLs without a query (RFC 9111 §4.2.2). Off unless asked for.
    var heuristicFreshness: Bool

    init(heuristicFreshness: Bool = false) {
        self.heuristicFreshness = heuristicFreshness
    }

    /// Status codes a response may be stored with even without explicit freshness (RFC 9110
    /// §15.1, "heuristically cacheable"), less `206`, whose ranges this cache does not combine.
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// What to do with `request` given `entry`, the stored response under its primary key (or
    /// `nil`), at `now`.
    func decision(for request: HTTPCacheRequest, entry: HTTPCacheEntry?, now: Date) -> HTTPCacheDecision {
        let requestDirectives = CacheControl(requestHeaders: request.headers)
        let offline = request.mode == .onlyIfCached || (request.mode == .default && requestDirectives.onlyIfCached)
        guard Self.isCacheableMethod(request.method), request.mode != .noStore, request.mode != .reload,
            let entry, entry.method == request.method, entry.matches(requestHeaders: request.headers)
        else { return offline ? .gatewayTimeout : .network }
        let age = Self.seconds(currentAge(of: entry, now: now))
        let validation = Self.conditionalHeaders(for: entry)
        let revalidateOrFetch: HTTPCacheDecision =
            validation.isEmpty ? .network : .revalidate(conditionalHeaders: validation)

        switch request.mode {
        case .forceCache, .onlyIfCached:
            return .serve(age: age)
        case .noCache:
            return revalidateOrFetch
        case .default, .noStore, .reload:
            break
        }

        let responseDirectives = CacheControl(responseHeaders: entry.responseHeaders)
        if !responseDirectives.noCache, !requestDirectives.noCache {
            let lifetime = Self.seconds(freshnessLifetime(of: entry))
            let tooOld = requestDirectives.maxAge.map { age > $0 } ?? false
            let notFreshEnough = requestDirectives.minFresh.map { lifetime - age < $0 } ?? false
            if age < lifetime, !tooOld, !notFreshEnough { return .serve(age: age) }
            if age >= lifetime, !tooOld, !responseDirectives.mustRevalidate {
                let staleness = age - lifetime
                switch requestDirectives.maxStale {
                case .unlimited?: return .serve(age: age)
                case .seconds(let bound)? where staleness <= bound: return .serve(age: age)
                default: break
                }
                if let window = responseDirectives.staleWhileRevalidate, staleness <= window,
                    requestDirectives.maxAge == nil, requestDirectives.minFresh == nil, !offline
                {
                    return .serveStaleAndRefresh(age: age, conditionalHeaders: validation)
                }
            }
        }
        return offline ? .gatewayTimeout : revalidateOrFetch
    }

    /// Whether the stale `entry` may answer `request` at `now` because the network failed (or
    /// answered `500`, `502`, `503` or `504`): within the response's or the request's
    /// `stale-if-error` window, unless `no-cache` or `must-revalidate` forbid serving it stale.
    func mayServeStaleOnError(_ entry: HTTPCacheEntry, for request: HTTPCacheRequest, now: Date) -> Bool {
        guard request.mode != .noStore, request.mode != .reload, entry.method == request.method,
            entry.matches(requestHeaders: request.headers)
        else { return false }
        let responseDirectives = CacheControl(responseHeaders: entry.responseHeaders)
        guard !responseDirectives.noCache, !responseDirectives.mustRevalidate else { return false }
        let requestDirectives = CacheControl(requestHeaders: request.headers)
        guard let window = [responseDirectives.staleIfError, requestDirectives.staleIfError].compactMap({ $0 }).max()
        else { return false }
        let staleness = Self.seconds(currentAge(of: entry, now: now)) - Self.seconds(freshnessLifetime(of: entry))
        return staleness <= window
    }

    /// The response's freshness lifetime in seconds (RFC 9111 §4.2.1): `max-age`, else
    /// `Expires` − `Date` (an `Expires` that is not a date means already expired), else, when
    /// ``heuristicFreshness`` is on, 10 % of `Date` − `Last-Modified` for a heuristically
    /// cacheable status and a URL without a query; else 0.
    func freshnessLifetime(of entry: HTTPCacheEntry) -> TimeInterval {
        let headers = entry.responseHeaders
        if let maxAge = CacheControl(responseHeaders: headers).maxAge { return TimeInterval(maxAge) }
        // `Date` absent or unreadable: the time the response arrived stands in (§5.6.7 of 9110).
        let date = headers.value(for: "Date").flatMap(HTTPDate.parse) ?? entry.responseTime
        if let expires = headers.value(for: "Expires") {
            guard let expiry = HTTPDate.parse(expires.trimmingHTTPWhitespace.description) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        guard heuristicFreshness, Self.heuristicallyCacheable.contains(entry.statusCode),
            URLComponents(url: entry.url, resolvingAgainstBaseURL: true)?.percentEncodedQuery == nil,
            let lastModified = headers.value(for: "Last-Modified").flatMap(HTTPDate.parse)
        else { return 0 }
        return max(0, date.timeIntervalSince(lastModified) / 10)
    }

    /// The response's current age in seconds at `now` (RFC 9111 §4.2.3): the `Age` it came
    /// with, the time it spent on the way (`response_time` − `request_time`), the difference
    /// between its `Date` and when it arrived, and the time it has spent here since.
    func currentAge(of entry: HTTPCacheEntry, now: Date) -> TimeInterval {
        let headers = entry.responseHeaders
        let ageValue = TimeInterval(Self.ageValue(headers.value(for: "Age")))
        let dateValue = headers.value(for: "Date").flatMap(HTTPDate.parse) ?? entry.responseTime
        let apparentAge = max(0, entry.responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, entry.responseTime.timeIntervalSince(entry.requestTime))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(entry.responseTime))
        return correctedInitialAge + residentTime
    }

    /// `Age` as seconds: the first of several values (RFC 9111 §5.1); one that is not
    /// delta-seconds (negative, a fraction, a word) is ignored, as §5.1 asks, so the age comes
    /// from `Date` and the times alone; one too large for ``CacheControl/greatestDeltaSeconds`` is
    /// read as it (§1.2.2), which makes the response stale.
    static func ageValue(_ value: String?) -> Int {
        guard let value else { return 0 }
        let first = Substring(value).utf8.prefix { $0 != UInt8(ascii: ",") }.trimmingHTTPWhitespace
        return CacheControl.deltaSeconds(String(Substring(first))) ?? 0
    }

    /// The headers that make a request conditional on `entry` (RFC 9111 §4.3.1): `If-None-Match`
    /// with its `ETag`, `If-Modified-Since` with its `Last-Modified`; empty when it has neither.
    static func conditionalHeaders(for entry: HTTPCacheEntry) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let tag = entry.entityTag { headers.update(name: "If-None-Match", value: tag) }
        if let lastModified = entry.responseHeaders.value(for: "Last-Modified") {
            headers.update(name: "If-Modified-Since", value: lastModified)
        }
        return headers
    }

    /// `GET` and `HEAD`: the methods whose responses this cache stores and serves.
    static func isCacheableMethod(_ method: String) -> Bool {
        method == "GET" || method == "HEAD"
    }

    /// A number of seconds as a whole number, clamped to delta-seconds' range (and NaN to 0).
    static func seconds(_ interval: TimeInterval) -> Int {
        guard interval.isFinite, interval > 0 else { return 0 }
        return Int(min(interval, TimeInterval(CacheControl.greatestDeltaSeconds)))
    }
}
