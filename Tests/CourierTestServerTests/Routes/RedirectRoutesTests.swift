import Testing

@testable import CourierTestServer

@Suite struct RedirectRoutesTests {
    @Test func redirectChainsAreRelativeByDefault() async throws {
        try await TestServer.withRunningServer { server in
            let first = try await expectSameAsHttpbin(
                server,
                "/redirect/3",
                comparingHeaders: ["Location"],
                comparingBody: .none
            )
            #expect(first.status == 302)
            #expect(first.headers["Location"] == ["/relative-redirect/2"])
            let middle = try await expectSameAsHttpbin(
                server,
                "/relative-redirect/2",
                comparingHeaders: ["Location"],
                comparingBody: .none
            )
            #expect(middle.headers["Location"] == ["/relative-redirect/1"])
            let last = try await expectSameAsHttpbin(
                server,
                "/relative-redirect/1",
                comparingHeaders: ["Location"],
                comparingBody: .none
            )
            #expect(last.headers["Location"] == ["/get"])
            let one = try await expectSameAsHttpbin(
                server,
                "/redirect/1",
                comparingHeaders: ["Location"],
                comparingBody: .none
            )
            #expect(one.headers["Location"] == ["/get"])
        }
    }

    @Test func absoluteRedirectsNameTheHost() async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let absolute = try await Exchange.make(server.baseURL, "/redirect/2?absolute=true")
            #expect(absolute.headers["Location"] == ["\(base)/absolute-redirect/1"])
            let next = try await Exchange.make(server.baseURL, "/absolute-redirect/1")
            #expect(next.status == 302)
            #expect(next.headers["Location"] == ["\(base)/get"])
            if let httpbin = Httpbin.url {
                let theirs = try await Exchange.make(httpbin, "/absolute-redirect/2")
                #expect(theirs.headers["Location"] == ["\(httpbin.absoluteString)/absolute-redirect/1"])
                let ours = try await Exchange.make(server.baseURL, "/absolute-redirect/2")
                #expect(ours.headers["Location"] == ["\(base)/absolute-redirect/1"])
            }
        }
    }

    @Test func redirectToUsesTheGivenURLAndStatus() async throws {
        try await TestServer.withRunningServer { server in
            let temporary = try await expectSameAsHttpbin(
                server,
                "/redirect-to?url=https%3A%2F%2Fexample.org%2Fx&status_code=307",
                method: .POST,
                comparingHeaders: ["Location"],
                comparingBody: .none
            )
            #expect(temporary.status == 307)
            #expect(temporary.headers["Location"] == ["https://example.org/x"])
            let outOfRange = try await expectSameAsHttpbin(
                server,
                "/redirect-to?url=/get&status_code=200",
                comparingHeaders: ["Location"],
                comparingBody: .none
            )
            #expect(outOfRange.status == 302)
        }
    }

    @Test func invalidCountsFailLikeHttpbin() async throws {
        try await TestServer.withRunningServer { server in
            let zero = try await expectSameAsHttpbin(server, "/redirect/0", comparingBody: .none)
            #expect(zero.status == 500)
            let notANumber = try await expectSameAsHttpbin(server, "/redirect/x", comparingBody: .none)
            #expect(notANumber.status == 404)
        }
    }
}
