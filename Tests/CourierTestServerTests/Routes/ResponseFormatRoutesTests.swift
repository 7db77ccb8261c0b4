import NIOHTTP1
import Testing

@testable import CourierTestServer

@Suite struct ResponseFormatRoutesTests {
    @Test func jsonIsTheSampleSlideshow() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(server, "/json")
            #expect(answer.json?["slideshow"]?["title"] == .string("Sample Slide Show"))
        }
    }

    @Test func documentsHaveTheirContentTypes() async throws {
        try await TestServer.withRunningServer { server in
            let xml = try await expectSameAsHttpbin(server, "/xml", comparingBody: .none)
            #expect(xml.headers["Content-Type"] == ["application/xml"])
            #expect(xml.text.hasPrefix("<?xml") && xml.text.contains("<slideshow"))
            let html = try await expectSameAsHttpbin(server, "/html", comparingBody: .none)
            #expect(html.headers["Content-Type"] == ["text/html; charset=utf-8"])
            #expect(html.text.contains("<html>"))
            let utf8 = try await expectSameAsHttpbin(server, "/encoding/utf8", comparingBody: .none)
            #expect(utf8.headers["Content-Type"] == ["text/html; charset=utf-8"])
            #expect(String(validating: utf8.body, as: UTF8.self)?.contains("日本語") == true)
            #expect(utf8.body.count > utf8.text.count, "the document holds multi-byte characters")
        }
    }

    @Test(arguments: [("gzip", "gzipped"), ("deflate", "deflated")])
    func compressedRoutesDecodeToTheirDocument(encoding: String, flag: String) async throws {
        try await TestServer.withRunningServer { server in
            let raw = try await Exchange.make(server.baseURL, "/\(encoding)")
            #expect(raw.headers["Content-Encoding"] == [encoding])
            #expect(raw.json == nil, "the raw body is compressed")
            if encoding == "gzip" { #expect(raw.body.starts(with: [0x1F, 0x8B])) }
            if encoding == "deflate" { #expect(raw.body.first == 0x78) }

            let decoded = try await expectSameAsHttpbin(
                server,
                "/\(encoding)",
                headers: [("Accept-Encoding", encoding)],
                comparingHeaders: ["Content-Type", "Content-Encoding"],
                decompressing: true
            )
            #expect(decoded.json?[flag] == .bool(true))
            #expect(decoded.json?["method"] == .string("GET"))
        }
    }

    @Test func responseHeadersSetsAndEchoesHeaders() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/response-headers?X-Custom=1&multi=a&multi=b",
                method: .POST,
                comparingHeaders: ["Content-Type", "Content-Length", "X-Custom", "multi"]
            )
            #expect(answer.headers["X-Custom"] == ["1"])
            #expect(answer.headers["multi"] == ["a", "b"])
            let json = try #require(answer.json)
            #expect(json["multi"] == .array([.string("a"), .string("b")]))
            #expect(json["Content-Length"] == .string(String(answer.body.count)))
        }
    }
}
