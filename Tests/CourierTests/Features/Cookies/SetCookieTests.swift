import Foundation
import Testing

@testable import Courier

@Suite struct SetCookieTests {
    /// Every attribute Courier reads, names in any case, spaces around the pieces.
    @Test func readsEveryAttribute() throws {
        let cookie = try #require(
            SetCookie.parse(
                " SID = 31d4d96e407aad42 ; path=/docs; DOMAIN=.Example.COM; secure; HttpOnly; "
                    + "Expires=Wed, 09 Jun 2021 10:18:14 GMT; Max-Age=3600; SameSite=lax; Unknown=1; Version"
            )
        )
        #expect(cookie.name == "SID")
        #expect(cookie.value == "31d4d96e407aad42")
        #expect(cookie.path == "/docs")
        #expect(cookie.domain == "example.com")
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
        #expect(cookie.expires == Date(timeIntervalSince1970: 1_623_233_894))
        #expect(cookie.maxAge == 3600)
        #expect(cookie.sameSite == .lax)
    }

    /// A bare cookie has no attribute set; quotes and `=` inside a value are kept.
    @Test func readsABareCookie() throws {
        let cookie = try #require(SetCookie.parse(#"token="a=b=c""#))
        #expect(cookie == SetCookie(name: "token", value: #""a=b=c""#))
        #expect(SetCookie.parse("empty=")?.value == "")
    }

    /// RFC 6265 §5.2: no `=` or an empty name ignores the cookie (RFC 6265bis's nameless cookies
    /// are not accepted); a control character other than a tab ignores it too.
    @Test func ignoresCookiesAUserAgentIgnores() {
        for field in ["nameless", "=value", " =value; Path=/", "", ";a=b", "a=b\r\nX-Evil: 1", "a=b\0c", "a=\u{7F}"] {
            #expect(SetCookie.parse(field) == nil, "\(field.debugDescription)")
        }
        #expect(SetCookie.parse("a=b\tc")?.value == "b\tc")
    }

    /// The last of each attribute wins; one that cannot be read is ignored, not the cookie.
    @Test func theLastReadableAttributeWins() throws {
        let cookie = try #require(
            SetCookie.parse(
                "a=b; Max-Age=10; Max-Age=x1; Max-Age=20; Expires=bad; Domain=one.example; Domain=; "
                    + "SameSite=Strict; SameSite=sideways; Path=/x; Path=relative"
            )
        )
        #expect(cookie.maxAge == 20)
        #expect(cookie.expires == nil)
        #expect(cookie.domain == "one.example", "an empty Domain is ignored")
        #expect(cookie.sameSite == .strict, "an unknown SameSite is ignored")
        #expect(cookie.path == nil, "a Path not starting with / means the default path")
    }

    /// `Max-Age`: a sign only in front, digits only, zero and negatives kept (they expire the
    /// cookie), huge values saturated.
    @Test func readsMaxAge() {
        #expect(SetCookie.parse("a=b; Max-Age=-5")?.maxAge == -5)
        #expect(SetCookie.parse("a=b; Max-Age=0")?.maxAge == 0)
        #expect(SetCookie.parse("a=b; Max-Age=99999999999999999999999")?.maxAge == Int64.max)
        #expect(SetCookie.parse("a=b; Max-Age=-99999999999999999999999")?.maxAge == -Int64.max)
        for invalid in ["+5", "5s", "", "-", "1 2", "0x10"] {
            #expect(SetCookie.parse("a=b; Max-Age=\(invalid)")?.maxAge == nil, "\(invalid)")
        }
    }

    /// SameSite's three values, in any case.
    @Test func readsSameSite() {
        #expect(SetCookie.parse("a=b; samesite=STRICT")?.sameSite == .strict)
        #expect(SetCookie.parse("a=b; SameSite=Lax")?.sameSite == .lax)
        #expect(SetCookie.parse("a=b; SameSite=none")?.sameSite == Cookie.SameSite.none)
        #expect(SetCookie.parse("a=b; SameSite")?.sameSite == nil)
    }

    /// RFC 6265bis's limits: 4,096 bytes of name and value, 1,024 of an attribute value.
    @Test func enforcesSizeLimits() {
        let name = String(repeating: "n", count: 96)
        #expect(SetCookie.parse(name + "=" + String(repeating: "v", count: 4_000)) != nil)
        #expect(SetCookie.parse(name + "=" + String(repeating: "v", count: 4_001)) == nil)
        let path = "/" + String(repeating: "p", count: 1_023)
        #expect(SetCookie.parse("a=b; Path=\(path)")?.path == path)
        #expect(SetCookie.parse("a=b; Path=/x; Path=\(path)p")?.path == "/x", "a longer value is ignored")
    }

    /// Hostile fields are read in linear time and never crash (generous bound: milliseconds expected).
    @Test func readsHostileInputInLinearTime() async throws {
        let megabyte = 1_000_000
        let inputs = [
            String(repeating: ";", count: megabyte),
            "a=b" + String(repeating: ";", count: megabyte),
            "a=b" + String(repeating: "; Expires=1 Jan 2000 00:00:00", count: megabyte / 30),
            "a=b" + String(repeating: "; Max-Age=" + String(repeating: "9", count: 1_000), count: 1_000),
            "a=b; Expires=" + String(repeating: "1:1:1 ", count: megabyte / 6),
            String(repeating: "=", count: megabyte),
            String(repeating: " ", count: megabyte) + "a=b" + String(repeating: " ", count: megabyte),
            "a=b; Domain=" + String(repeating: ".", count: megabyte),
        ]
        let (_, elapsed) = try await offThePool {
            for input in inputs { _ = SetCookie.parse(input) }
        }
        #expect(elapsed < .seconds(20))
    }
}
