import NIOCore
import Testing

@testable import CourierTestServer

/// Client input that once crashed the server or let it forge headers. Each case must get an
/// answer (or a clean close) and leave the server serving.
@Suite struct InputSafetyTests {
    private func get(_ target: String, _ extraHeaders: String = "") -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\(extraHeaders)\r\n"
    }

    @Test(arguments: [
        "/fault/retry-after/k?status=-1", "/fault/flaky/k?status=-5", "/fault/retry-after/k?status=99999999999",
        "/fault/retry-after/k?date=true&seconds=9223372036854775000", "/status/200:inf,500:1",
        "/status/200:1e308,500:1e308", "/status/200:nan", "/range/2?chunk_size=9223372036854775807",
        "/stream-bytes/3?chunk_size=-9223372036854775808", "/delay/nan?x=%+41", "/drip?numbytes=3&duration=-inf",
        "/bytes/99999999999999999999999", "/redirect/-9223372036854775808",
    ])
    func hostileNumbersGetAnAnswer(target: String) async throws {
        // Long enough that a busy machine (the whole suite on 2 cores) still answers in time.
        let configuration = TestServer.Configuration { $0.maximumWait = .seconds(5) }
        try await TestServer.withRunningServer(configuration: configuration) { server in
            let result = try await RawConnection.exchange(port: server.port, request: get(target))
            #expect(result.head.hasPrefix("HTTP/1.1 "), "\(target) got an answer")
            let after = try await Exchange.make(server.baseURL, "/get")
            #expect(after.status == 200, "the server still serves after \(target)")
        }
    }

    @Test(arguments: [
        "/drip?numbytes=5000000000&duration=0", "/range/5000000000?chunk_size=5000000000",
        "/stream-bytes/5000000000?chunk_size=5000000000",
    ])
    func hugeBodiesStartInConstantMemory(target: String) async throws {
        try await TestServer.withRunningServer { server in
            // Read the head and the first 100 kB, then hang up: the body starts at once, in chunks.
            let result = try await RawConnection.exchange(port: server.port, request: get(target), byteLimit: 100_000)
            #expect(result.head.hasPrefix("HTTP/1.1 200"), "\(target) \(result.ending) \(result.bytes.count)")
            #expect(result.bytes.count >= 100_000)
            let after = try await Exchange.make(server.baseURL, "/get")
            #expect(after.status == 200)
        }
    }

    @Test(arguments: [
        "/response-headers?X=a%0D%0AInjected:%20yes", "/redirect-to?url=/x%0D%0AInjected:%201",
        "/etag/a%0D%0AInjected:%201", "/response-headers?Bad%0AName=1",
    ])
    func lineBreaksCannotForgeHeaders(target: String) async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(port: server.port, request: get(target))
            #expect(result.head.hasPrefix("HTTP/1.1 500"), "\(target)")
            #expect(!result.head.contains("Injected"))
            if let httpbin = Httpbin.url, !target.hasPrefix("/etag"), !target.contains("Bad%0A") {
                let theirs = try await Exchange.make(httpbin, target)
                #expect(theirs.status == 500, "httpbin answers \(target) with 500 too")
            }
        }
    }

    @Test func cookieValuesAreQuotedAsWerkzeugQuotesThem() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/cookies/set?a=b%0D%0AInjected:%201&c=%C3%A9&d=x%20y&e=plain",
                comparingHeaders: ["Set-Cookie"],
                comparingBody: .none
            )
            #expect(
                answer.headers["Set-Cookie"] == [
                    "a=\"b\\015\\012Injected:\\0401\"; Path=/".replacingOccurrences(of: "\\040", with: " "),
                    "c=\"\\303\\251\"; Path=/", "d=\"x y\"; Path=/", "e=plain; Path=/",
                ]
            )
        }
    }

    @Test func framingHeadersFromTheQueryCloseTheConnection() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: "GET /response-headers?Content-Length=3 HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(result.ending == .closed, "no later request can be read at a wrong offset")
            let merged = try await expectSameAsHttpbin(server, "/response-headers?Content-Type=text/plain")
            #expect(merged.json?["Content-Type"] == .array([.string("application/json"), .string("text/plain")]))
        }
    }

    @Test func upgradeRequestsAreAnsweredAndClosed() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: "GET /get HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                    + "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"
            )
            #expect(result.head.hasPrefix("HTTP/1.1 200"))
            #expect(result.head.contains("Connection: close"))
            #expect(result.ending == .closed)
        }
    }

    @Test func garbageAfterAPipelinedRequestIsAnsweredAfterIt() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: "GET /delay/0.2 HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n"
            )
            let ok = try #require(result.text.range(of: "HTTP/1.1 200 OK"))
            let bad = try #require(result.text.range(of: "HTTP/1.1 400 Bad Request"))
            #expect(ok.lowerBound < bad.lowerBound)
            #expect(result.ending == .closed)
        }
    }

    @Test func pathsMatchAsFlaskMatchesThem() async throws {
        try await TestServer.withRunningServer { server in
            let trailing = try await expectSameAsHttpbin(server, "/get/", comparingBody: .none)
            #expect(trailing.status == 404)
            let doubled = try await Exchange.make(server.baseURL, "//get")
            #expect(doubled.status == 404)
            let escaped = try await expectSameAsHttpbin(server, "/g%65t", comparingBody: .none)
            #expect(escaped.status == 200)
            let sign = try await expectSameAsHttpbin(server, "/get?x=%+41", ignoring: [["url"]])
            #expect(sign.json?["args"]?["x"] == .string("% 41"))
        }
    }
}
