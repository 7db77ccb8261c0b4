import Foundation
import Testing

@testable import Courier

/// A clock tests move by hand.
private final class ManualNow: Sendable {
    private let date = Protected(Date(timeIntervalSince1970: 1_700_000_000))

    var now: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        date.withLock { $0 += seconds }
    }
}

private func url(_ text: String) throws -> URL {
    try #require(URL(string: text))
}

@Suite struct CookieJarTests {
    private let clock: ManualNow
    private let jar: CookieJar

    init() {
        let clock = ManualNow()
        self.clock = clock
        jar = CookieJar(now: { clock.now })
    }

    private func store(_ fields: String..., from address: String) throws {
        jar.store(setCookieFields: fields, from: try url(address))
    }

    private func header(_ address: String) throws -> String? {
        jar.cookieHeader(for: try url(address))
    }

    // MARK: - Domains

    /// Without `Domain`, a cookie goes back to its host alone, not to subdomains or parents.
    @Test func aHostOnlyCookieGoesToItsHostAlone() throws {
        try store("a=1", from: "https://www.example.com/")
        #expect(try header("https://www.example.com/x") == "a=1")
        #expect(try header("https://WWW.Example.com:8443/") == "a=1", "hosts compare case-insensitively, any port")
        #expect(try header("https://sub.www.example.com/") == nil)
        #expect(try header("https://example.com/") == nil)
        let cookie = try #require(jar.allCookies.first)
        #expect(cookie.isHostOnly && cookie.domain == "www.example.com")
    }

    /// With `Domain`, the domain and every subdomain get it; other names ending alike do not.
    @Test func aDomainCookieGoesToSubdomains() throws {
        try store("a=1; Domain=.Example.com", from: "https://www.example.com/")
        #expect(try header("https://example.com/") == "a=1")
        #expect(try header("https://deep.sub.example.com/") == "a=1")
        #expect(try header("https://notexample.com/") == nil)
        #expect(try header("https://example.org/") == nil)
        #expect(jar.allCookies.first?.isHostOnly == false)
    }

    /// A `Domain` the host is not within, a single label, or a bare suffix is refused.
    @Test func refusesDomainsTheHostIsNotIn() throws {
        for domain in ["other.com", "com", "ample.com", "www.example.com.evil", "sub.www.example.com"] {
            try store("a=1; Domain=\(domain)", from: "https://www.example.com/")
        }
        #expect(jar.allCookies.isEmpty)
    }

    /// For an IP address, `Domain` must be the address itself (then the cookie is host-only).
    @Test func anAddressMatchesOnlyItself() throws {
        try store("a=1; Domain=127.0.0.1", "b=2; Domain=0.0.1", from: "http://127.0.0.1/")
        #expect(try header("http://127.0.0.1/") == "a=1")
        #expect(try header("http://1.127.0.0.1/") == nil)
        try store("c=3", from: "http://[::1]:8080/")
        #expect(try header("http://[::1]/") == "c=3")
        #expect(jar.allCookies.allSatisfy { $0.isHostOnly })
    }

    /// A single-label host may name itself (`Domain=localhost`), which stays host-only.
    @Test func aSingleLabelHostMayNameItself() throws {
        try store("a=1; Domain=localhost", from: "http://localhost/")
        #expect(try header("http://localhost/") == "a=1")
        #expect(try header("http://sub.localhost/") == nil)
        #expect(jar.allCookies.first?.isHostOnly == true)
    }

    // MARK: - Paths

    /// Without `Path`, the cookie's path is the directory of the request's path.
    @Test func theDefaultPathIsTheRequestsDirectory() throws {
        try store("a=1", from: "https://example.com/docs/web/page?q=1")
        try store("b=2", from: "https://example.com/page")
        try store("c=3; Path=relative", from: "https://example.com/")
        #expect(
            Dictionary(uniqueKeysWithValues: jar.allCookies.map { ($0.name, $0.path) }) == [
                "a": "/docs/web", "b": "/", "c": "/",
            ]
        )
        #expect(try header("https://example.com/docs/web") == "a=1; b=2; c=3")
        #expect(try header("https://example.com/docs/web/more") == "a=1; b=2; c=3")
        #expect(try header("https://example.com/docs/webx") == "b=2; c=3")
        #expect(try header("https://example.com/docs") == "b=2; c=3")
    }

    /// `Path=/docs` covers `/docs` and below, not `/docsx`; `Path=/docs/` covers below only.
    @Test func pathsMatchAtSlashes() throws {
        try store("a=1; Path=/docs", "b=2; Path=/docs/", from: "https://example.com/")
        #expect(try header("https://example.com/docs") == "a=1")
        #expect(try header("https://example.com/docs/") == "b=2; a=1")
        #expect(try header("https://example.com/docs/x") == "b=2; a=1")
        #expect(try header("https://example.com/docsx") == nil)
        #expect(try header("https://example.com/") == nil)
    }

    // MARK: - Secure

    /// `Secure` cookies come only from and go only to `https`; `http` to `localhost` is no exception.
    @Test func secureCookiesNeedHTTPS() throws {
        try store("a=1; Secure", from: "http://example.com/")
        #expect(jar.allCookies.isEmpty, "RFC 6265bis: not set from http")
        try store("a=1; Secure", "b=2", from: "https://example.com/")
        #expect(try header("https://example.com/") == "a=1; b=2")
        #expect(try header("http://example.com/") == "b=2")
        try store("c=3; Secure", from: "https://localhost/")
        #expect(try header("https://localhost/") == "c=3")
        #expect(try header("http://localhost/") == nil)
        #expect(try header("wss://localhost/") == "c=3")
    }

    /// A plain cookie set over `http` cannot shadow a `Secure` one of the same name.
    @Test func plainHTTPCannotShadowASecureCookie() throws {
        try store("s=secret; Secure; Domain=example.com", from: "https://example.com/")
        try store("s=forged", from: "http://www.example.com/")
        try store("s=forged; Path=/deeper", from: "http://example.com/")
        #expect(jar.allCookies.map(\.value) == ["secret"])
        try store("s=replaced", from: "https://www.example.com/")
        #expect(jar.allCookies.count == 2, "over https a plain cookie may share the name")
    }

    /// `__Secure-` needs `Secure`; `__Host-` needs `Secure`, no `Domain` and `Path=/`.
    @Test func namePrefixesAreEnforced() throws {
        try store(
            "__Secure-a=1",
            "__secure-b=2",
            "__Secure-c=3; Secure",
            "__Host-d=4; Secure; Path=/",
            "__Host-e=5; Secure; Path=/; Domain=example.com",
            "__Host-f=6; Secure; Path=/x",
            "__Host-g=7; Path=/",
            from: "https://example.com/"
        )
        #expect(Set(jar.allCookies.map(\.name)) == ["__Secure-c", "__Host-d"])
    }

    // MARK: - Expiry

    /// `Max-Age` counts from the store; `Expires` is a date; a cookie with neither is a session cookie.
    @Test func cookiesExpire() throws {
        try store("m=1; Max-Age=60", "e=2; Expires=Wed, 09 Jun 2100 10:18:14 GMT", "s=3", from: "https://example.com/")
        #expect(try header("https://example.com/") == "m=1; e=2; s=3")
        #expect(jar.allCookies.first { $0.name == "s" }?.expiresAt == nil)
        #expect(jar.allCookies.first { $0.name == "m" }?.expiresAt == clock.now.addingTimeInterval(60))
        clock.advance(by: 60)
        #expect(try header("https://example.com/") == "e=2; s=3")
        try store("p=4; Expires=Wed, 09 Jun 2021 10:18:14 GMT", from: "https://example.com/")
        #expect(jar.allCookies.map(\.name) == ["e", "s"], "a date in the past stores nothing")
    }

    /// `Max-Age` wins over `Expires`, whichever comes first and whichever is later.
    @Test func maxAgeWinsOverExpires() throws {
        try store(
            "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Max-Age=60",
            "b=2; Max-Age=0; Expires=Wed, 09 Jun 2100 10:18:14 GMT",
            "c=3; Max-Age=-1",
            from: "https://example.com/"
        )
        #expect(jar.allCookies.map(\.name) == ["a"])
    }

    /// `Max-Age=0` or a past `Expires` deletes a stored cookie of the same name, domain and path.
    @Test func anExpiredCookieDeletesItsNamesake() throws {
        try store("a=1", "b=2", "c=3; Path=/x", from: "https://example.com/")
        try store(
            "a=gone; Max-Age=0",
            "b=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            "c=kept; Max-Age=0",
            from: "https://example.com/"
        )
        #expect(jar.allCookies.map(\.name) == ["c"])
    }

    // MARK: - Replacement and order

    /// A cookie with the same name, domain and path replaces the old one but keeps its creation
    /// time, so it keeps its place in the header.
    @Test func replacementKeepsCreationTime() throws {
        let created = clock.now
        try store("a=1", from: "https://example.com/")
        clock.advance(by: 10)
        try store("b=2", from: "https://example.com/")
        clock.advance(by: 10)
        try store("a=3; HttpOnly", from: "https://example.com/")
        #expect(try header("https://example.com/") == "a=3; b=2")
        let cookie = try #require(jar.allCookies.first { $0.name == "a" })
        #expect(cookie.createdAt == created)
        #expect(cookie.isHTTPOnly)
        #expect(jar.allCookies.count == 2)
    }

    /// Longer paths first, then earlier created; same names on other paths are other cookies.
    @Test func theHeaderOrdersByPathLengthThenCreation() throws {
        try store(
            "root=1; Path=/",
            "deep=2; Path=/a/b",
            "mid=3; Path=/a",
            "root2=4; Path=/",
            "mid=5; Path=/a/b",
            from: "https://example.com/"
        )
        #expect(try header("https://example.com/a/b/c") == "deep=2; mid=5; mid=3; root=1; root2=4")
    }

    // MARK: - Eviction

    /// Past a domain's limit, its least recently used cookie goes; sending counts as use.
    @Test func evictsTheLeastRecentlyUsedOfADomain() throws {
        let clock = self.clock
        let jar = CookieJar(limits: CookieJar.Limits(cookiesPerDomain: 3, totalCookies: 100), now: { clock.now })
        jar.store(
            setCookieFields: ["c1=1; Path=/1", "c2=2; Path=/2", "c3=3; Path=/3"],
            from: try url("https://a.example/")
        )
        jar.store(setCookieFields: ["other=1"], from: try url("https://b.example/"))
        clock.advance(by: 1)
        #expect(jar.cookieHeader(for: try url("https://a.example/1")) == "c1=1")
        _ = jar.cookies(for: try url("https://a.example/2"))  // inspecting is no use
        jar.store(setCookieFields: ["c4=4; Path=/4"], from: try url("https://a.example/"))
        #expect(Set(jar.allCookies.map(\.name)) == ["c1", "c3", "c4", "other"])
        #expect(jar.allCookies.first { $0.name == "c1" }?.lastAccessedAt == clock.now)
    }

    /// Past the total, the least recently used of all go; expired cookies go before anything else.
    @Test func evictsExpiredThenLeastRecentlyUsedOverall() throws {
        let clock = self.clock
        let jar = CookieJar(limits: CookieJar.Limits(cookiesPerDomain: 10, totalCookies: 3), now: { clock.now })
        jar.store(setCookieFields: ["a=1; Max-Age=5"], from: try url("https://a.example/"))
        jar.store(setCookieFields: ["b=1"], from: try url("https://b.example/"))
        jar.store(setCookieFields: ["c=1"], from: try url("https://c.example/"))
        clock.advance(by: 10)
        jar.store(setCookieFields: ["d=1"], from: try url("https://d.example/"))
        #expect(Set(jar.allCookies.map(\.name)) == ["b", "c", "d"], "the expired one went, not b")
        jar.store(setCookieFields: ["e=1", "f=1"], from: try url("https://e.example/"))
        #expect(Set(jar.allCookies.map(\.name)) == ["d", "e", "f"])
    }

    // MARK: - Managing and privacy

    /// `remove` takes a domain in any case, with or without its dot; `removeAll` empties the jar.
    @Test func removesCookies() throws {
        try store("a=1; Domain=example.com; Path=/p", "b=2", from: "https://www.example.com/")
        #expect(!jar.remove(name: "a", domain: "example.com", path: "/"))
        #expect(jar.remove(name: "a", domain: ".EXAMPLE.com", path: "/p"))
        #expect(jar.allCookies.map(\.name) == ["b"])
        jar.removeAll()
        #expect(jar.allCookies.isEmpty)
        #expect(try header("https://www.example.com/") == nil)
    }

    /// Values never show in descriptions, `dump`s or the jar's description.
    @Test func descriptionsRedactValues() throws {
        try store("session=s3cr3t-value; Secure; HttpOnly; SameSite=Strict; Max-Age=60", from: "https://example.com/")
        let cookie = try #require(jar.allCookies.first)
        #expect(cookie.value == "s3cr3t-value")
        var dumped = ""
        dump(cookie, to: &dumped)
        for text in [
            cookie.description, String(reflecting: cookie), "\(cookie)", dumped, jar.description, "\([cookie])",
        ] {
            #expect(!text.contains("s3cr3t"), "\(text)")
        }
        #expect(cookie.description.contains("session=<redacted>"))
        #expect(cookie.description.contains("SameSite=Strict"))
        #expect(jar.description == "CookieJar(1 cookies)")
    }

    /// A URL without a host stores and sends nothing.
    @Test func ignoresURLsWithoutAHost() throws {
        try store("a=1", from: "file:///tmp/x")
        #expect(jar.allCookies.isEmpty)
        #expect(try header("file:///tmp/x") == nil)
    }

    /// Many tasks storing and sending at once (run under ThreadSanitizer in CI).
    @Test func isSafeToShareBetweenTasks() async throws {
        let jar = CookieJar()
        let address = try url("https://example.com/")
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        jar.store(setCookieFields: ["c\(task)-\(index % 10)=\(index)"], from: address)
                        _ = jar.cookieHeader(for: address)
                    }
                }
            }
        }
        #expect(jar.allCookies.count == 50, "80 names, the domain's limit of 50")
    }
}
