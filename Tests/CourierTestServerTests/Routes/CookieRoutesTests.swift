import Testing

@testable import CourierTestServer

@Suite struct CookieRoutesTests {
    @Test func cookiesEchoesTheCookieHeader() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/cookies",
                headers: [("Cookie", "a=1; b=two; __utma=x")]
            )
            #expect(answer.json == .object(["cookies": .object(["a": .string("1"), "b": .string("two")])]))
            let shown = try await expectSameAsHttpbin(server, "/cookies?show_env=1", headers: [("Cookie", "__utma=x")])
            #expect(shown.json?["cookies"]?["__utma"] == .string("x"))
        }
    }

    @Test func setRedirectsWithSetCookie() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/cookies/set?a=1&b=2",
                comparingHeaders: ["Location", "Set-Cookie"],
                comparingBody: .none
            )
            #expect(answer.status == 302)
            #expect(answer.headers["Location"] == ["/cookies"])
            #expect(answer.headers["Set-Cookie"] == ["a=1; Path=/", "b=2; Path=/"])
            let single = try await expectSameAsHttpbin(
                server,
                "/cookies/set/name/value",
                comparingHeaders: ["Location", "Set-Cookie"],
                comparingBody: .none
            )
            #expect(single.headers["Set-Cookie"] == ["name=value; Path=/"])
        }
    }

    @Test func deleteExpiresTheCookies() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/cookies/delete?a&b",
                comparingHeaders: ["Location", "Set-Cookie"],
                comparingBody: .none
            )
            #expect(answer.status == 302)
            #expect(
                answer.headers["Set-Cookie"] == [
                    "a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/",
                    "b=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/",
                ]
            )
        }
    }
}
