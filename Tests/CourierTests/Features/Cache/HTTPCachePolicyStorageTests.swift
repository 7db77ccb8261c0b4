import Foundation
import Testing

@testable import Courier

@Suite struct HTTPCachePolicyStorageTests {
    let policy = HTTPCachePolicy()
    let start = CacheFixture.start

    private func storable(
        _ headers: HTTPHeaders,
        status: Int = 200,
        method: String = "GET",
        requestHeaders: HTTPHeaders = [:],
        mode: RequestCacheMode = .default
    ) -> Bool {
        CacheFixture.entry(
            headers,
            status: status,
            request: CacheFixture.request(method, headers: requestHeaders, mode: mode)
        ) != nil
    }

    @Test func storesGetAndHeadOnly() {
        #expect(storable(["Cache-Control": "max-age=60"]))
        #expect(storable(["Cache-Control": "max-age=60"], method: "HEAD"))
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get"] {
            #expect(!storable(["Cache-Control": "max-age=60"], method: method))
        }
    }

    @Test func statusMustBeHeuristicallyCacheableOrExplicitlyFresh() {
        for status in [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501] { #expect(storable([:], status: status)) }
        for status in [201, 302, 303, 307, 400, 403, 500, 503] {
            #expect(!storable([:], status: status))
            #expect(storable(["Cache-Control": "max-age=5"], status: status))
            #expect(storable(["Expires": CacheFixture.date(60)], status: status))
            #expect(storable(["Cache-Control": "public"], status: status))
        }
        #expect(!storable(["Cache-Control": "max-age=60"], status: 206))
        #expect(!storable(["Cache-Control": "max-age=60"], status: 304))
        #expect(!storable(["Cache-Control": "max-age=60"], status: 101))
        #expect(!storable(["Cache-Control": "max-age=60"], requestHeaders: ["Range": "bytes=0-1"]))
    }

    @Test func noStoreAnywhereMeansNotStored() {
        #expect(!storable(["Cache-Control": "max-age=60, no-store"]))
        #expect(!storable(["Cache-Control": "max-age=60"], requestHeaders: ["Cache-Control": "no-store"]))
        #expect(!storable(["Cache-Control": "max-age=60"], mode: .noStore))
        #expect(storable(["Cache-Control": "max-age=60"], mode: .reload))
        #expect(storable(["Cache-Control": "private, max-age=60"]))
        #expect(!storable(["Cache-Control": "max-age=60", "Vary": "*"]))
    }

    @Test func authorizationNeedsPublicSMaxAgeOrMustRevalidate() {
        let authorization: HTTPHeaders = ["Authorization": "Bearer t"]
        #expect(!storable(["Cache-Control": "max-age=60"], requestHeaders: authorization))
        #expect(!storable(["Cache-Control": "private, max-age=60"], requestHeaders: authorization))
        #expect(storable(["Cache-Control": "public, max-age=60"], requestHeaders: authorization))
        #expect(storable(["Cache-Control": "s-maxage=60"], requestHeaders: authorization))
        #expect(storable(["Cache-Control": "max-age=60, must-revalidate"], requestHeaders: authorization))
    }

    @Test func storedHeadersLoseHopByHopFields() throws {
        let entry = try #require(
            CacheFixture.entry([
                "Cache-Control": "max-age=60", "Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "timeout=5",
                "Transfer-Encoding": "chunked", "Content-Type": "text/plain", "Content-Length": "5",
            ])
        )
        #expect(
            entry.responseHeaders == [
                "Cache-Control": "max-age=60", "Content-Type": "text/plain", "Content-Length": "5",
            ]
        )
        #expect(entry.key == "GET https://example.com/resource")
    }

    // MARK: 304

    @Test func notModifiedMergesHeadersButNotFraming() throws {
        let entry = try #require(
            CacheFixture.entry([
                "Cache-Control": "max-age=10", "ETag": "\"v1\"", "Content-Length": "5", "Content-Encoding": "gzip",
                "Content-Type": "text/plain", "X-Old": "kept",
            ])
        )
        let notModified = HTTPCacheResponseHead(
            statusCode: 304,
            headers: [
                "Cache-Control": "max-age=100", "ETag": "W/\"v1\"", "Content-Length": "0", "Content-Encoding": "br",
                "X-New": "added", "Connection": "keep-alive",
            ]
        )
        let later = start.addingTimeInterval(50)
        let merged = try #require(
            policy.merging(notModified: notModified, into: entry, requestTime: later, responseTime: later)
        )
        #expect(merged.responseHeaders["Cache-Control"] == "max-age=100")
        #expect(merged.responseHeaders["ETag"] == "W/\"v1\"")
        #expect(merged.responseHeaders["Content-Length"] == "5")
        #expect(merged.responseHeaders["Content-Encoding"] == "gzip")
        #expect(merged.responseHeaders["X-Old"] == "kept")
        #expect(merged.responseHeaders["X-New"] == "added")
        #expect(merged.responseHeaders["Connection"] == nil)
        #expect(merged.statusCode == 200)
        #expect(merged.responseTime == later)
        #expect(
            policy.decision(for: CacheFixture.request(), entry: merged, now: later.addingTimeInterval(99))
                == .serve(age: 99)
        )
    }

    /// A 304 without `Date` dates the entry at its arrival, and one without `Age` drops the old
    /// response's: else the old `Date` against the new arrival makes the entry stale at once.
    @Test func aNotModifiedWithoutDateOrAgeStartsTheAgeAgain() throws {
        let entry = try #require(
            CacheFixture.entry([
                "Cache-Control": "max-age=100", "ETag": "\"v1\"", "Date": CacheFixture.date(0), "Age": "30",
            ])
        )
        let later = start.addingTimeInterval(500)
        let merged = try #require(
            policy.merging(
                notModified: HTTPCacheResponseHead(statusCode: 304, headers: ["ETag": "\"v1\""]),
                into: entry,
                requestTime: later,
                responseTime: later
            )
        )
        #expect(merged.responseHeaders["Date"] == CacheFixture.httpDate(later))
        #expect(merged.responseHeaders["Age"] == nil)
        #expect(
            policy.decision(for: CacheFixture.request(), entry: merged, now: later.addingTimeInterval(10))
                == .serve(age: 10)
        )
        // A 304 that sends them is taken at its word.
        let dated = try #require(
            policy.merging(
                notModified: HTTPCacheResponseHead(
                    statusCode: 304,
                    headers: ["ETag": "\"v1\"", "Date": CacheFixture.date(490), "Age": "5"]
                ),
                into: entry,
                requestTime: later,
                responseTime: later
            )
        )
        #expect(dated.responseHeaders["Date"] == CacheFixture.date(490))
        #expect(dated.responseHeaders["Age"] == "5")
    }

    @Test(arguments: [
        0.0, 1.0, 86_399.0, 86_400.0, 784_111_777.0, 951_782_400.0, 1_700_000_000.5, 4_102_444_800.0, -1.0, -86_401.0,
        253_402_300_799.0,
    ])
    func formatsDatesThatParseBack(seconds: TimeInterval) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let text = try #require(HTTPDate.format(date))
        #expect(text == CacheFixture.httpDate(date))
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds.rounded(.down)))
    }

    @Test func refusesToFormatYearsTheFormCannotHold() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(HTTPDate.format(.distantPast) == nil)
        #expect(HTTPDate.format(.distantFuture) == "Mon, 01 Jan 4001 00:00:00 GMT")
    }

    @Test func notModifiedForAnotherRepresentationIsRefused() throws {
        let entry = try #require(
            CacheFixture.entry([
                "Cache-Control": "max-age=10", "ETag": "\"v1\"", "Last-Modified": CacheFixture.date(-9),
            ])
        )
        func merge(_ headers: HTTPHeaders, status: Int = 304) -> HTTPCacheEntry? {
            policy.merging(
                notModified: HTTPCacheResponseHead(statusCode: status, headers: headers),
                into: entry,
                requestTime: start,
                responseTime: start
            )
        }
        #expect(merge(["ETag": "\"v2\""]) == nil)
        #expect(merge(["ETag": "W/\"v2\""]) == nil)
        #expect(merge(["Last-Modified": CacheFixture.date(-1)]) == nil)
        #expect(merge(["ETag": "\"v1\""], status: 200) == nil)
        #expect(merge(["Last-Modified": CacheFixture.date(-9)]) != nil)
        #expect(merge([:]) != nil)
        #expect(HTTPCachePolicy.weaklyMatch("W/\"a\"", "\"a\""))
        #expect(!HTTPCachePolicy.weaklyMatch("\"a\"", "\"b\""))
        #expect(HTTPCachePolicy.stronglyMatch("\"a\"", " \"a\""))
        #expect(!HTTPCachePolicy.stronglyMatch("\"a\"", "W/\"a\""))
        #expect(!HTTPCachePolicy.stronglyMatch("W/\"a\"", "W/\"a\""))
    }

    @Test func aStrongTagIn304MatchesOnlyTheSameStrongTag() throws {
        func merge(stored: String, notModified: String) throws -> HTTPCacheEntry? {
            let entry = try #require(CacheFixture.entry(["Cache-Control": "max-age=10", "ETag": stored]))
            return policy.merging(
                notModified: HTTPCacheResponseHead(statusCode: 304, headers: ["ETag": notModified]),
                into: entry,
                requestTime: start,
                responseTime: start
            )
        }
        #expect(try merge(stored: "W/\"v1\"", notModified: "\"v1\"") == nil, "a strong tag names another body")
        #expect(try merge(stored: "\"v1\"", notModified: "\"v1\"") != nil)
        #expect(try merge(stored: "\"v1\"", notModified: "W/\"v1\"") != nil)
        #expect(try merge(stored: "W/\"v1\"", notModified: "W/\"v1\"") != nil)
    }

    @Test func aHeadResponseFreshensOnlyTheSameRepresentation() throws {
        let tagged = try #require(CacheFixture.entry(["Cache-Control": "max-age=10", "ETag": "\"v1\""]))
        let dated = try #require(
            CacheFixture.entry([
                "Cache-Control": "max-age=10", "Last-Modified": CacheFixture.date(-9), "Content-Length": "5",
            ])
        )
        func freshen(_ entry: HTTPCacheEntry, _ headers: HTTPHeaders) -> HTTPCacheEntry? {
            policy.freshening(
                entry,
                withHeadResponse: HTTPCacheResponseHead(statusCode: 200, headers: headers),
                requestTime: start,
                responseTime: start
            )
        }
        let updated = try #require(freshen(tagged, ["ETag": "\"v1\"", "Cache-Control": "max-age=99"]))
        #expect(updated.responseHeaders.value(for: "Cache-Control") == "max-age=99")
        #expect(freshen(tagged, ["ETag": "\"v2\""]) == nil)
        #expect(freshen(tagged, ["ETag": "W/\"v1\""]) == nil, "a weak tag cannot vouch for the stored body")
        #expect(freshen(dated, ["Last-Modified": CacheFixture.date(-9), "Content-Length": "5"]) != nil)
        #expect(freshen(dated, ["Last-Modified": CacheFixture.date(-1)]) == nil)
        #expect(freshen(dated, ["Content-Length": "6"]) == nil)
        // Every validator and length sent must match, not only the first.
        #expect(freshen(dated, ["Last-Modified": CacheFixture.date(-9), "Content-Length": "6"]) == nil)
        #expect(freshen(tagged, ["ETag": "\"v1\"", "Last-Modified": CacheFixture.date(-1)]) == nil)
        // A body that came chunked: its stored length (0 here) stands for Content-Length.
        #expect(freshen(tagged, ["ETag": "\"v1\"", "Content-Length": "0"]) != nil)
        #expect(freshen(tagged, ["ETag": "\"v1\"", "Content-Length": "7"]) == nil)
        #expect(freshen(tagged, ["ETag": "\"v1\"", "Cache-Control": "no-store"]) == nil)
        #expect(freshen(tagged, ["ETag": "\"v1\"", "Vary": "Accept"]) == nil)
    }

    // MARK: Invalidation

    @Test func unsafeSuccessInvalidatesTheURLAndSameOriginLocations() throws {
        let request = CacheFixture.request("POST")
        let response = HTTPCacheResponseHead(
            statusCode: 201,
            headers: ["Location": "/items/7", "Content-Location": "https://other.example/items/7"]
        )
        #expect(
            policy.invalidatedKeys(for: request, response: response) == [
                "GET https://example.com/resource", "HEAD https://example.com/resource",
                "GET https://example.com/items/7", "HEAD https://example.com/items/7",
            ]
        )
        let put = CacheFixture.request("PUT")
        let sameOrigin = HTTPCacheResponseHead(
            statusCode: 303,
            headers: ["Content-Location": "https://EXAMPLE.com:443/x"]
        )
        #expect(policy.invalidatedKeys(for: put, response: sameOrigin).contains("GET https://example.com/x"))
    }

    @Test func safeMethodsAndErrorsInvalidateNothing() {
        let ok = HTTPCacheResponseHead(statusCode: 200, headers: [:])
        for method in ["GET", "HEAD", "OPTIONS", "TRACE"] {
            #expect(policy.invalidatedKeys(for: CacheFixture.request(method), response: ok).isEmpty)
        }
        for status in [400, 404, 500] {
            let failed = HTTPCacheResponseHead(statusCode: status, headers: [:])
            #expect(policy.invalidatedKeys(for: CacheFixture.request("DELETE"), response: failed).isEmpty)
        }
        #expect(!policy.invalidatedKeys(for: CacheFixture.request("PATCH"), response: ok).isEmpty)
    }
}
