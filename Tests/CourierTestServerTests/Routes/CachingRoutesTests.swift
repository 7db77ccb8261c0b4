import Testing

@testable import CourierTestServer

@Suite struct CachingRoutesTests {
    @Test func cacheAnswers304ToConditionalRequests() async throws {
        try await TestServer.withRunningServer { server in
            let fresh = try await expectSameAsHttpbin(server, "/cache")
            #expect(fresh.status == 200)
            let lastModified = try #require(fresh.headers["Last-Modified"].first)
            #expect(lastModified.hasSuffix(" GMT"))
            #expect(fresh.headers["ETag"].first?.count == 32)
            let conditional = try await expectSameAsHttpbin(
                server,
                "/cache",
                headers: [("If-Modified-Since", lastModified)],
                comparingBody: .none
            )
            #expect(conditional.status == 304 && conditional.body.isEmpty)
            let byTag = try await expectSameAsHttpbin(
                server,
                "/cache",
                headers: [("If-None-Match", "x")],
                comparingBody: .none
            )
            #expect(byTag.status == 304)
        }
    }

    @Test func cacheControlCarriesMaxAge() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(server, "/cache/60", comparingHeaders: ["Cache-Control"])
            #expect(answer.headers["Cache-Control"] == ["public, max-age=60"])
        }
    }

    @Test func etagHonoursIfNoneMatchAndIfMatch() async throws {
        try await TestServer.withRunningServer { server in
            let plain = try await expectSameAsHttpbin(server, "/etag/v1", comparingHeaders: ["ETag"])
            #expect(plain.status == 200 && plain.headers["ETag"] == ["v1"])
            let match = try await expectSameAsHttpbin(
                server,
                "/etag/v1",
                headers: [("If-None-Match", "\"v0\", W/\"v1\"")],
                comparingHeaders: ["ETag"],
                comparingBody: .none
            )
            #expect(match.status == 304 && match.headers["ETag"] == ["v1"])
            let star = try await expectSameAsHttpbin(
                server,
                "/etag/v1",
                headers: [("If-None-Match", "*")],
                comparingBody: .none
            )
            #expect(star.status == 304)
            let mismatch = try await expectSameAsHttpbin(
                server,
                "/etag/v1",
                headers: [("If-Match", "\"v2\"")],
                comparingBody: .none
            )
            #expect(mismatch.status == 412)
            let ifMatch = try await expectSameAsHttpbin(server, "/etag/v1", headers: [("If-Match", "\"v1\"")])
            #expect(ifMatch.status == 200)
        }
    }
}
