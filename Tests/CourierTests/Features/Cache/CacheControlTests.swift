import Foundation
import Testing

@testable import Courier

@Suite struct CacheControlTests {
    @Test func readsResponseDirectives() {
        let directives = CacheControl(
            "public, max-age=60, must-revalidate, stale-while-revalidate=30, stale-if-error=600, s-maxage=10"
        )
        #expect(directives.isPublic)
        #expect(directives.maxAge == 60)
        #expect(directives.sharedMaxAge == 10)
        #expect(directives.mustRevalidate)
        #expect(directives.staleWhileRevalidate == 30)
        #expect(directives.staleIfError == 600)
        #expect(!directives.noCache && !directives.noStore && !directives.isPrivate)
    }

    @Test func namesAreCaseInsensitiveAndWhitespaceIsSkipped() {
        let directives = CacheControl("  NO-STORE ,\tMax-Age = 5 ,, Private")
        #expect(directives.noStore)
        #expect(directives.maxAge == 5)
        #expect(directives.isPrivate)
    }

    @Test func readsQuotedValuesWithCommasInside() {
        let directives = CacheControl(#"no-cache="Set-Cookie, X-Foo", max-age="120", private="a\"b""#)
        #expect(directives.noCache)
        #expect(directives.maxAge == 120)
        #expect(directives.isPrivate)
        #expect(CacheControl.directives(in: #"private="a\"b", x"#).map(\.value) == [#"a"b"#, nil])
    }

    @Test func ignoresUnknownDirectivesAndGarbage() {
        let directives = CacheControl(#"foo, bar="baz, qux", =7, max-age=9 trailing junk, immutable"#)
        #expect(directives.maxAge == 9)
        #expect(
            directives
                == {
                    var expected = CacheControl()
                    expected.maxAge = 9
                    return expected
                }()
        )
    }

    /// RFC 9111 §4.2.1: a repeated lifetime means stale; an unreadable one too.
    @Test func repeatedOrInvalidMaxAgeIsStale() {
        #expect(CacheControl("max-age=60, max-age=60").maxAge == 0)
        #expect(CacheControl("max-age=60, max-age=3600").maxAge == 0)
        #expect(CacheControl("max-age=abc").maxAge == 0)
        #expect(CacheControl("max-age=-5").maxAge == 0)
        #expect(CacheControl("max-age").maxAge == 0)
        #expect(CacheControl("max-age=1.5").maxAge == 0)
    }

    /// RFC 9111 §1.2.2: delta-seconds beyond what can be represented is 2^31.
    @Test func hugeDeltaSecondsAreClamped() {
        #expect(CacheControl("max-age=99999999999999999999999999999999").maxAge == CacheControl.greatestDeltaSeconds)
        #expect(CacheControl("max-age=2147483647").maxAge == 2_147_483_647)
        #expect(CacheControl("max-age=2147483649").maxAge == CacheControl.greatestDeltaSeconds)
        #expect(
            CacheControl("stale-if-error=\(String(repeating: "9", count: 5000))").staleIfError
                == CacheControl.greatestDeltaSeconds
        )
    }

    @Test func conflictingRequestDirectivesResolveToTheMostRestrictive() {
        #expect(CacheControl("max-stale").maxStale == .unlimited)
        #expect(CacheControl("max-stale=10").maxStale == .seconds(10))
        #expect(CacheControl("max-stale, max-stale=10").maxStale == .seconds(10))
        #expect(CacheControl("max-stale=10, max-stale").maxStale == .seconds(10))
        #expect(CacheControl("max-stale=10, max-stale=3").maxStale == .seconds(3))
        #expect(CacheControl("max-stale=x").maxStale == .seconds(0))
        #expect(CacheControl("min-fresh=10, min-fresh=30").minFresh == 30)
        #expect(CacheControl("min-fresh=oops").minFresh == nil)
        #expect(CacheControl("stale-while-revalidate=30, stale-while-revalidate=5").staleWhileRevalidate == 5)
        #expect(CacheControl("stale-while-revalidate=bad").staleWhileRevalidate == 0)
        #expect(CacheControl("only-if-cached, no-cache").onlyIfCached)
    }

    @Test func pragmaNoCacheCountsOnlyWithoutCacheControl() {
        #expect(CacheControl(requestHeaders: ["Pragma": "no-cache"]).noCache)
        #expect(CacheControl(requestHeaders: ["Pragma": "foo, No-Cache"]).noCache)
        #expect(!CacheControl(requestHeaders: ["Pragma": "no-cache", "Cache-Control": "max-age=5"]).noCache)
        #expect(!CacheControl(requestHeaders: ["Pragma": "nocache"]).noCache)
        #expect(!CacheControl(responseHeaders: ["Pragma": "no-cache"]).noCache)
    }

    @Test func unterminatedQuotesAndEmptyValuesDoNotCrash() {
        for value in ["\"", "max-age=\"", "max-age=\"12", "=", ",,,", "\\", "no-cache=\"\\", "", " "] {
            _ = CacheControl(value)
        }
        #expect(CacheControl("max-age=\"12").maxAge == 12)
    }

    /// One pass over the bytes: a long hostile value takes milliseconds (the bound is generous).
    @Test func readingIsLinear() async throws {
        let hostile = String(repeating: "max-stale=1,\"", count: 50_000) + String(repeating: "a=b,", count: 50_000)
        let (_, elapsed) = try await offThePool { _ = CacheControl(hostile) }
        #expect(elapsed < .seconds(5))
    }
}
