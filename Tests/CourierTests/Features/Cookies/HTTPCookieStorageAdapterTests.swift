import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HTTPCookieStorageAdapterTests {
    /// A fresh in-memory storage (an ephemeral configuration's), so tests never share cookies
    /// or touch the user's file.
    private func makeAdapter() throws -> HTTPCookieStorageAdapter {
        HTTPCookieStorageAdapter(try #require(URLSessionConfiguration.ephemeral.httpCookieStorage))
    }

    private func url(_ text: String) throws -> URL {
        try #require(URL(string: text))
    }

    /// `Max-Age` becomes an expiry date (FoundationNetworking's own parser drops it on version 0
    /// cookies); `Secure` and `HttpOnly` are kept; the default path is the request's directory.
    @Test func storesCookiesReadByCourier() throws {
        let adapter = try makeAdapter()
        let before = Date()
        adapter.store(
            setCookieFields: ["a=1; Max-Age=3600; Secure; HttpOnly", "b=2; Domain=example.com"],
            from: try url("https://www.example.com/docs/page")
        )
        let cookies = adapter.storage.cookies ?? []
        let a = try #require(cookies.first { $0.name == "a" })
        let expiry = try #require(a.expiresDate)
        #expect(expiry >= before.addingTimeInterval(3_599) && expiry <= Date().addingTimeInterval(3_601))
        #expect(a.isSecure && a.isHTTPOnly)
        #expect(a.domain == "www.example.com")
        #expect(a.path == "/docs")
        let b = try #require(cookies.first { $0.name == "b" })
        #expect(b.domain == ".example.com")
        #expect(b.expiresDate == nil)
    }

    /// What Courier's rules refuse never reaches the storage.
    @Test func refusesWhatTheJarRefuses() throws {
        let adapter = try makeAdapter()
        adapter.store(
            setCookieFields: ["a=1; Domain=com", "b=2; Domain=other.org"],
            from: try url("https://www.example.com/")
        )
        adapter.store(setCookieFields: ["c=3; Secure", "d=4; Max-Age=0"], from: try url("http://example.com/"))
        #expect((adapter.storage.cookies ?? []).isEmpty)
    }

    /// The header is filtered by domain, path and `Secure`, longer paths first (paths of different
    /// lengths here: Foundation's creation times, which break ties, may be equal).
    @Test func sendsWhatRFC6265Sends() throws {
        let adapter = try makeAdapter()
        adapter.store(
            setCookieFields: [
                "root=1; Path=/", "deep=2; Path=/a/b", "secure=3; Secure; Path=/a", "other=4; Path=/elsewhere",
            ],
            from: try url("https://example.com/")
        )
        #expect(adapter.cookieHeader(for: try url("https://example.com/a/b/c")) == "deep=2; secure=3; root=1")
        #expect(adapter.cookieHeader(for: try url("http://example.com/a/b")) == "deep=2; root=1")
        #expect(adapter.cookieHeader(for: try url("https://sub.example.com/")) == nil)
        #expect(adapter.cookieHeader(for: try url("https://example.org/")) == nil)
    }

    /// A new cookie replaces its namesake, and `Max-Age=0` deletes it.
    @Test func replacesAndDeletes() throws {
        let adapter = try makeAdapter()
        let address = try url("https://example.com/")
        adapter.store(setCookieFields: ["a=1", "b=2"], from: address)
        adapter.store(setCookieFields: ["a=3", "b=gone; Max-Age=0"], from: address)
        #expect(adapter.cookieHeader(for: address) == "a=3")
        #expect(adapter.storage.cookies?.count == 1)
    }

    /// Past its limits the storage loses the oldest cookies of a crowded domain, then the oldest
    /// of all; a cookie set again by name replaces its namesake rather than counting twice.
    @Test func evictsPastItsLimits() throws {
        let adapter = HTTPCookieStorageAdapter(
            try #require(URLSessionConfiguration.ephemeral.httpCookieStorage),
            limits: CookieJar.Limits(cookiesPerDomain: 3, totalCookies: 5)
        )
        let first = try url("https://one.example/")
        // One response at a time, so that creation times differ (they order eviction).
        for index in 0..<5 { adapter.store(setCookieFields: ["c\(index)=\(index)"], from: first) }
        adapter.store(setCookieFields: ["c4=again"], from: first)
        #expect(adapter.cookieHeader(for: first)?.split(separator: ";").count == 3)
        #expect(adapter.cookies(for: first).contains { $0.name == "c4" && $0.value == "again" })
        #expect(!adapter.cookies(for: first).contains { $0.name == "c0" || $0.name == "c1" })
        let second = try url("https://two.example/")
        adapter.store(setCookieFields: ["d0=0", "d1=1", "d2=2"], from: second)
        #expect(adapter.storage.cookies?.count == 5)
        #expect(adapter.cookies(for: second).count == 3, "the newest of all are kept")
    }

    /// A response evicts from the domains it set cookies for: a domain other code crowded keeps
    /// its cookies while the total allows them.
    @Test func evictsOnlyFromTheDomainsAResponseSet() throws {
        let adapter = HTTPCookieStorageAdapter(
            try #require(URLSessionConfiguration.ephemeral.httpCookieStorage),
            limits: CookieJar.Limits(cookiesPerDomain: 3, totalCookies: 100)
        )
        for index in 0..<5 {
            let cookie = try #require(
                HTTPCookie(properties: [.name: "o\(index)", .value: "1", .domain: "other.example", .path: "/"])
            )
            adapter.storage.setCookie(cookie)
        }
        for index in 0..<4 { adapter.store(setCookieFields: ["c\(index)=1"], from: try url("https://one.example/")) }
        let domains = (adapter.storage.cookies ?? []).map(\.domain)
        #expect(domains.filter { $0 == "other.example" }.count == 5)
        #expect(domains.filter { $0 == "one.example" }.count == 3)
    }

    /// Many plain `http` fields for the names of stored `Secure` cookies: each name, domain and
    /// path is checked for shadowing once, and none of them replaces the `Secure` one.
    @Test func aFloodOfShadowingFieldsIsRefused() throws {
        let adapter = try makeAdapter()
        let secureOrigin = try url("https://shadow.example/")
        adapter.store(setCookieFields: (0..<50).map { "s=secure; Secure; Path=/p\($0)" }, from: secureOrigin)
        let fields = (0..<5_000).map { "s=plain\($0); Path=/p\($0 % 50)" }
        adapter.store(setCookieFields: fields, from: try url("http://shadow.example/"))
        let stored = adapter.storage.cookies ?? []
        #expect(stored.count == 50)
        #expect(stored.allSatisfy { $0.value == "secure" && $0.isSecure })
    }

    /// A response of thousands of `Set-Cookie` fields leaves the storage within its limits.
    @Test func aFloodOfCookiesStaysWithinTheLimits() throws {
        let adapter = try makeAdapter()
        let fields = (0..<5_000).map { "flood\($0)=x; Path=/p\($0 % 7)" }
        adapter.store(setCookieFields: fields, from: try url("https://flood.example/"))
        let names = Set((adapter.storage.cookies ?? []).map(\.name))
        #expect(names == Set((4_950..<5_000).map { "flood\($0)" }), "the newest 50 are kept")
    }

    /// A storage that accepts no cookies gets none.
    @Test func honoursTheNeverAcceptPolicy() throws {
        let adapter = try makeAdapter()
        adapter.storage.cookieAcceptPolicy = .never
        adapter.store(setCookieFields: ["a=1"], from: try url("https://example.com/"))
        #expect((adapter.storage.cookies ?? []).isEmpty)
        #expect(!adapter.description.contains("a=1"))
    }
}
