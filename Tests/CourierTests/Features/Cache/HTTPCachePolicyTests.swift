import Foundation
import Testing

@testable import Courier

/// Builders shared by the cache's suites: a request, a response head, an entry stored at a
/// fixed time.
enum CacheFixture {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    static let url = URL(string: "https://example.com/resource") ?? URL(fileURLWithPath: "/")

    static func request(
        _ method: String = "GET",
        url: URL = CacheFixture.url,
        headers: HTTPHeaders = [:],
        mode: RequestCacheMode = .default
    ) -> HTTPCacheRequest {
        HTTPCacheRequest(method: method, url: url, headers: headers, mode: mode)
    }

    static func entry(
        _ headers: HTTPHeaders,
        status: Int = 200,
        request: HTTPCacheRequest = CacheFixture.request(),
        requestTime: Date = start,
        responseTime: Date = start,
        policy: HTTPCachePolicy = HTTPCachePolicy()
    ) -> HTTPCacheEntry? {
        policy.entryToStore(
            for: request,
            response: HTTPCacheResponseHead(statusCode: status, headers: headers),
            requestTime: requestTime,
            responseTime: responseTime
        )
    }

    static func date(_ offset: TimeInterval) -> String {
        httpDate(start.addingTimeInterval(offset))
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

@Suite struct HTTPCachePolicyTests {
    let policy = HTTPCachePolicy()
    let start = CacheFixture.start

    private func decide(
        _ entry: HTTPCacheEntry?,
        at offset: TimeInterval,
        headers: HTTPHeaders = [:],
        mode: RequestCacheMode = .default,
        policy: HTTPCachePolicy? = nil
    ) -> HTTPCacheDecision {
        (policy ?? self.policy).decision(
            for: CacheFixture.request(headers: headers, mode: mode),
            entry: entry,
            now: start.addingTimeInterval(offset)
        )
    }

    // MARK: Freshness

    @Test func maxAgeIsFreshUntilItPasses() throws {
        let entry = try #require(CacheFixture.entry(["Cache-Control": "max-age=60", "ETag": "\"a\""]))
        #expect(decide(entry, at: 0) == .serve(age: 0))
        #expect(decide(entry, at: 59) == .serve(age: 59))
        #expect(decide(entry, at: 60) == .revalidate(conditionalHeaders: ["If-None-Match": "\"a\""]))
    }

    @Test func maxAgeWinsOverExpires() throws {
        let entry = try #require(
            CacheFixture.entry([
                "Cache-Control": "max-age=10", "Date": CacheFixture.date(0), "Expires": CacheFixture.date(3600),
            ])
        )
        #expect(policy.freshnessLifetime(of: entry) == 10)
    }

    @Test func expiresMinusDateIsTheLifetime() throws {
        let entry = try #require(
            CacheFixture.entry(["Date": CacheFixture.date(-100), "Expires": CacheFixture.date(200)])
        )
        #expect(policy.freshnessLifetime(of: entry) == 300)
        // Date 100 s before the response arrived: already 100 s old.
        #expect(policy.currentAge(of: entry, now: start) == 100)
        #expect(decide(entry, at: 199) == .serve(age: 299))
        #expect(decide(entry, at: 200) == .network)
    }

    @Test func invalidExpiresIsAlreadyExpired() throws {
        for expires in ["0", "-1", "tomorrow", ""] {
            let entry = try #require(
                CacheFixture.entry(["Expires": expires, "Last-Modified": CacheFixture.date(-1000)])
            )
            #expect(policy.freshnessLifetime(of: entry) == 0)
            #expect(HTTPCachePolicy(heuristicFreshness: true).freshnessLifetime(of: entry) == 0)
        }
    }

    @Test func heuristicIsOptInAndOnlyWithoutAQuery() throws {
        let headers: HTTPHeaders = ["Date": CacheFixture.date(0), "Last-Modified": CacheFixture.date(-10_000)]
        let heuristic = HTTPCachePolicy(heuristicFreshness: true)
        let entry = try #require(CacheFixture.entry(headers))
        #expect(policy.freshnessLifetime(of: entry) == 0)
        #expect(heuristic.freshnessLifetime(of: entry) == 1000)
        #expect(decide(entry, at: 999, policy: heuristic) == .serve(age: 999))
        let queried = try #require(URL(string: "https://example.com/resource?page=2"))
        let withQuery = try #require(CacheFixture.entry(headers, request: CacheFixture.request(url: queried)))
        #expect(heuristic.freshnessLifetime(of: withQuery) == 0)
        let notHeuristic = try #require(CacheFixture.entry(headers.merging(["Cache-Control": "private"]), status: 302))
        #expect(heuristic.freshnessLifetime(of: notHeuristic) == 0)
    }

    /// RFC 9111 §4.2.3 with every term non-zero.
    @Test func currentAgeCountsAgeDelayApparentAgeAndResidence() throws {
        let entry = try #require(
            CacheFixture.entry(
                ["Cache-Control": "max-age=1000", "Age": "30", "Date": CacheFixture.date(0)],
                requestTime: start,
                responseTime: start.addingTimeInterval(5)
            )
        )
        // apparent 5, corrected age 30 + 5 = 35, resident 10.
        #expect(policy.currentAge(of: entry, now: start.addingTimeInterval(15)) == 45)
        let skewed = try #require(
            CacheFixture.entry(
                ["Cache-Control": "max-age=1000", "Age": "1", "Date": CacheFixture.date(-100)],
                responseTime: start
            )
        )
        #expect(policy.currentAge(of: skewed, now: start) == 100)
        #expect(HTTPCachePolicy.ageValue("12, 50") == 12)
        #expect(HTTPCachePolicy.ageValue("soon") == 0, "an invalid Age is ignored")
        #expect(HTTPCachePolicy.ageValue("-5") == 0)
        #expect(HTTPCachePolicy.ageValue("1.5") == 0)
        #expect(HTTPCachePolicy.ageValue("99999999999999999999") == CacheControl.greatestDeltaSeconds)
        #expect(HTTPCachePolicy.ageValue(nil) == 0)
    }

    // MARK: Request directives

    @Test func requestMaxAgeAndMinFresh() throws {
        let entry = try #require(CacheFixture.entry(["Cache-Control": "max-age=100", "ETag": "\"v\""]))
        let revalidate = HTTPCacheDecision.revalidate(conditionalHeaders: ["If-None-Match": "\"v\""])
        #expect(decide(entry, at: 50, headers: ["Cache-Control": "max-age=60"]) == .serve(age: 50))
        #expect(decide(entry, at: 61, headers: ["Cache-Control": "max-age=60"]) == revalidate)
        #expect(decide(entry, at: 50, headers: ["Cache-Control": "min-fresh=50"]) == .serve(age: 50))
        #expect(decide(entry, at: 51, headers: ["Cache-Control": "min-fresh=50"]) == revalidate)
    }

    @Test func requestMaxStaleWithAndWithoutValue() throws {
        let entry = try #require(CacheFixture.entry(["Cache-Control": "max-age=10"]))
        #expect(decide(entry, at: 30, headers: ["Cache-Control": "max-stale=20"]) == .serve(age: 30))
        #expect(decide(entry, at: 31, headers: ["Cache-Control": "max-stale=20"]) == .network)
        #expect(decide(entry, at: 1_000_000, headers: ["Cache-Control": "max-stale"]) == .serve(age: 1_000_000))
        let mustRevalidate = try #require(CacheFixture.entry(["Cache-Control": "max-age=10, must-revalidate"]))
        #expect(decide(mustRevalidate, at: 11, headers: ["Cache-Control": "max-stale"]) == .network)
        #expect(decide(mustRevalidate, at: 9, headers: ["Cache-Control": "max-stale"]) == .serve(age: 9))
    }

    @Test func requestNoCacheAndPragmaRevalidate() throws {
        let entry = try #require(
            CacheFixture.entry(["Cache-Control": "max-age=100", "Last-Modified": CacheFixture.date(-50)])
        )
        let revalidate = HTTPCacheDecision.revalidate(conditionalHeaders: ["If-Modified-Since": CacheFixture.date(-50)])
        #expect(decide(entry, at: 1, headers: ["Cache-Control": "no-cache"]) == revalidate)
        #expect(decide(entry, at: 1, headers: ["Pragma": "no-cache"]) == revalidate)
        #expect(decide(entry, at: 1, headers: ["Pragma": "no-cache", "Cache-Control": "max-age=5"]) == .serve(age: 1))
    }

    @Test func onlyIfCachedDirectiveAnswers504WhenNothingUsable() throws {
        let entry = try #require(CacheFixture.entry(["Cache-Control": "max-age=10", "ETag": "\"e\""]))
        #expect(decide(entry, at: 5, headers: ["Cache-Control": "only-if-cached"]) == .serve(age: 5))
        #expect(decide(entry, at: 50, headers: ["Cache-Control": "only-if-cached"]) == .gatewayTimeout)
        #expect(decide(entry, at: 50, headers: ["Cache-Control": "only-if-cached, max-stale"]) == .serve(age: 50))
        #expect(decide(nil, at: 0, headers: ["Cache-Control": "only-if-cached"]) == .gatewayTimeout)
    }

    // MARK: Response directives

    @Test func responseNoCacheAlwaysRevalidates() throws {
        let entry = try #require(CacheFixture.entry(["Cache-Control": "no-cache, max-age=1000", "ETag": "W/\"1\""]))
        #expect(decide(entry, at: 0) == .revalidate(conditionalHeaders: ["If-None-Match": "W/\"1\""]))
        #expect(decide(entry, at: 0, headers: ["Cache-Control": "max-stale"]) != .serve(age: 0))
    }

    @Test func staleWhileRevalidateWindow() throws {
        let entry = try #require(
            CacheFixture.entry(["Cache-Control": "max-age=10, stale-while-revalidate=20", "ETag": "\"s\""])
        )
        let validation: HTTPHeaders = ["If-None-Match": "\"s\""]
        #expect(decide(entry, at: 5) == .serve(age: 5))
        #expect(decide(entry, at: 15) == .serveStaleAndRefresh(age: 15, conditionalHeaders: validation))
        #expect(decide(entry, at: 30) == .serveStaleAndRefresh(age: 30, conditionalHeaders: validation))
        #expect(decide(entry, at: 31) == .revalidate(conditionalHeaders: validation))
        #expect(
            decide(entry, at: 15, headers: ["Cache-Control": "max-age=12"])
                == .revalidate(conditionalHeaders: validation)
        )
        let mustRevalidate = try #require(
            CacheFixture.entry(["Cache-Control": "max-age=10, stale-while-revalidate=20, must-revalidate"])
        )
        #expect(decide(mustRevalidate, at: 15) == .network)
    }

    @Test func staleIfErrorWindow() throws {
        let entry = try #require(CacheFixture.entry(["Cache-Control": "max-age=10, stale-if-error=60"]))
        let request = CacheFixture.request()
        #expect(policy.mayServeStaleOnError(entry, for: request, now: start.addingTimeInterval(70)))
        #expect(!policy.mayServeStaleOnError(entry, for: request, now: start.addingTimeInterval(71)))
        let plain = try #require(CacheFixture.entry(["Cache-Control": "max-age=10"]))
        #expect(!policy.mayServeStaleOnError(plain, for: request, now: start.addingTimeInterval(20)))
        let asked = CacheFixture.request(headers: ["Cache-Control": "stale-if-error=30"])
        #expect(policy.mayServeStaleOnError(plain, for: asked, now: start.addingTimeInterval(40)))
        let forbidden = try #require(
            CacheFixture.entry(["Cache-Control": "max-age=10, stale-if-error=60, must-revalidate"])
        )
        #expect(!policy.mayServeStaleOnError(forbidden, for: request, now: start.addingTimeInterval(20)))
    }

    // MARK: Modes

    @Test func modesFollowFetch() throws {
        let stale = try #require(CacheFixture.entry(["Cache-Control": "max-age=10", "ETag": "\"m\""]))
        let fresh = try #require(CacheFixture.entry(["Cache-Control": "max-age=1000", "ETag": "\"m\""]))
        let validation = HTTPCacheDecision.revalidate(conditionalHeaders: ["If-None-Match": "\"m\""])
        #expect(decide(fresh, at: 1, mode: .noStore) == .network)
        #expect(decide(fresh, at: 1, mode: .reload) == .network)
        #expect(decide(fresh, at: 1, mode: .noCache) == validation)
        #expect(decide(stale, at: 100, mode: .forceCache) == .serve(age: 100))
        #expect(decide(nil, at: 100, mode: .forceCache) == .network)
        #expect(decide(stale, at: 100, mode: .onlyIfCached) == .serve(age: 100))
        #expect(decide(nil, at: 100, mode: .onlyIfCached) == .gatewayTimeout)
        let noValidators = try #require(CacheFixture.entry(["Cache-Control": "max-age=1000"]))
        #expect(decide(noValidators, at: 1, mode: .noCache) == .network)
    }

    // MARK: Vary

    @Test func varyMatchesNormalisedValuesAndStarNeverMatches() throws {
        let original = CacheFixture.request(headers: ["Accept-Encoding": "gzip,  br", "Accept": "text/html"])
        let entry = try #require(
            CacheFixture.entry(
                ["Cache-Control": "max-age=100", "Vary": "accept-encoding, Accept-Language"],
                request: original
            )
        )
        #expect(entry.selectedRequestHeaders == ["accept-encoding": "gzip, br"])
        #expect(decide(entry, at: 1, headers: ["accept-encoding": " gzip, br "]) == .serve(age: 1))
        #expect(decide(entry, at: 1, headers: ["Accept-Encoding": "gzip"]) == .network)
        #expect(decide(entry, at: 1, headers: ["Accept-Encoding": "gzip, br", "Accept-Language": "fr"]) == .network)
        #expect(decide(entry, at: 1, headers: [:]) == .network)
        var star = entry
        star.responseHeaders.update(name: "Vary", value: "Accept, *")
        #expect(decide(star, at: 1, headers: ["Accept-Encoding": "gzip, br"]) == .network)
    }

    @Test func keyHasMethodSchemeHostPortPathAndQuery() {
        func key(_ method: String, _ text: String) -> String? {
            URL(string: text).flatMap { HTTPCacheKey.primary(method: method, url: $0) }
        }
        #expect(key("GET", "HTTPS://Example.COM:443/a?b=1#frag") == "GET https://example.com/a?b=1")
        #expect(key("GET", "http://example.com:80") == "GET http://example.com/")
        #expect(key("GET", "http://example.com:8080/a") == "GET http://example.com:8080/a")
        #expect(key("GET", "https://user:pw@example.com/a%2Fb?x=%20") == "GET https://example.com/a%2Fb?x=%20")
        #expect(key("HEAD", "https://example.com/a") != key("GET", "https://example.com/a"))
        #expect(key("GET", "https://example.com/get?a=1") != key("GET", "https://example.com/get?a=2"))
        #expect(key("GET", "http://example.com/a") != key("GET", "https://example.com/a"))
        #expect(key("GET", "ftp://example.com/a") == nil)
    }
}

extension HTTPHeaders {
    /// These headers with `other`'s added.
    func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        var merged = self
        for header in other { merged.update(header) }
        return merged
    }
}
