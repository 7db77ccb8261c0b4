import Foundation
import NIOHTTP1
import Testing

@testable import CourierTestServer

@Suite struct InspectionRoutesTests {
    @Test func getEchoesArgsHeadersOriginAndURL() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/get?a=1&a=2&b=x%20y&flag&x=%E2%9C%93",
                headers: [("X-Test", "1"), ("x-test", "2"), ("X-Forwarded-Proto-Like", "v")]
            )
            #expect(answer.status == 200)
            #expect(answer.headers["Content-Type"] == ["application/json"])
            let json = try #require(answer.json)
            #expect(
                json["args"]
                    == .object([
                        "a": .array([.string("1"), .string("2")]), "b": .string("x y"), "flag": .string(""),
                        "x": .string("✓"),
                    ])
            )
            #expect(json["headers"]?["X-Test"] == .string("1,2"))
            #expect(json["headers"]?["X-Forwarded-Proto-Like"] == .string("v"))
            #expect(json["origin"] == .string("127.0.0.1"))
            #expect(json["url"] == .string("\(server.baseURL.absoluteString)/get?a=1&a=2&b=x%20y&flag&x=✓"))
        }
    }

    @Test(arguments: [HTTPMethod.POST, .PUT, .PATCH, .DELETE])
    func methodRoutesEchoAJSONBody(method: HTTPMethod) async throws {
        try await TestServer.withRunningServer { server in
            let body = Array(#"{"name": "Courier", "tags": ["http", 2, 2.5, true, null]}"#.utf8)
            let answer = try await expectSameAsHttpbin(
                server,
                "/\(method.rawValue.lowercased())?q=1",
                method: method,
                headers: [("Content-Type", "application/json")],
                body: body
            )
            let json = try #require(answer.json)
            #expect(
                json["json"]
                    == .object([
                        "name": .string("Courier"),
                        "tags": .array([.string("http"), .int(2), .double(2.5), .bool(true), .null]),
                    ])
            )
            #expect(json["data"] == .string(String(decoding: body, as: UTF8.self)))
            #expect(json["form"] == .object([:]) && json["files"] == .object([:]))
            #expect(json["args"] == .object(["q": .string("1")]))
        }
    }

    @Test func postDecodesURLEncodedForms() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/post",
                method: .POST,
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array("a=1&b=x+y&a=2".utf8)
            )
            let json = try #require(answer.json)
            #expect(json["form"] == .object(["a": .array([.string("1"), .string("2")]), "b": .string("x y")]))
            #expect(json["data"] == .string("") && json["json"] == .null)
        }
    }

    @Test func anythingDecodesMultipartFilesAndFields() async throws {
        try await TestServer.withRunningServer { server in
            let boundary = "courier-boundary"
            let body =
                Array(
                    ("--\(boundary)\r\nContent-Disposition: form-data; name=\"greeting\"\r\n\r\nhello\r\n"
                        + "--\(boundary)\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n"
                        + "Content-Type: text/plain\r\n\r\nfile text\r\n"
                        + "--\(boundary)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\n"
                        + "Content-Type: application/octet-stream\r\n\r\n").utf8
                ) + [0xFF, 0x00, 0xFE]
                + Array("\r\n--\(boundary)--\r\n".utf8)
            let answer = try await expectSameAsHttpbin(
                server,
                "/anything/some/path",
                method: .PUT,
                headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")],
                body: body
            )
            let json = try #require(answer.json)
            #expect(json["method"] == .string("PUT"))
            #expect(json["form"] == .object(["greeting": .string("hello")]))
            #expect(
                json["files"]
                    == .object([
                        "doc": .string("file text"), "blob": .string("data:application/octet-stream;base64,/wD+"),
                    ])
            )
            #expect(json["url"] == .string("\(server.baseURL.absoluteString)/anything/some/path"))
        }
    }

    @Test func binaryBodiesBecomeDataURLs() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/anything",
                method: .POST,
                headers: [("Content-Type", "application/octet-stream")],
                body: [0, 1, 0xFF]
            )
            #expect(answer.json?["data"] == .string("data:application/octet-stream;base64,AAH/"))
        }
    }

    @Test func headersIPAndUserAgent() async throws {
        try await TestServer.withRunningServer { server in
            let headers = try await expectSameAsHttpbin(
                server,
                "/headers",
                headers: [("X-Real-Ip", "hidden"), ("Via", "hidden"), ("x-lower.dot", "shown")]
            )
            #expect(headers.json?["headers"]?["X-Real-Ip"] == nil)
            #expect(headers.json?["headers"]?["Via"] == nil)
            #expect(headers.json?["headers"]?["X-Lower.Dot"] == .string("shown"))
            let shown = try await expectSameAsHttpbin(server, "/headers?show_env=1", headers: [("Via", "proxy")])
            #expect(shown.json?["headers"]?["Via"] == .string("proxy"))

            let ip = try await expectSameAsHttpbin(server, "/ip")
            #expect(ip.json == .object(["origin": .string("127.0.0.1")]))
            let forwarded = try await expectSameAsHttpbin(server, "/ip", headers: [("X-Forwarded-For", "203.0.113.9")])
            #expect(forwarded.json == .object(["origin": .string("203.0.113.9")]))

            let agent = try await expectSameAsHttpbin(server, "/user-agent", headers: [("User-Agent", "Courier/1")])
            #expect(agent.json == .object(["user-agent": .string("Courier/1")]))
        }
    }

    @Test func uuidIsAFreshVersion4UUID() async throws {
        try await TestServer.withRunningServer { server in
            let first = try await expectSameAsHttpbin(server, "/uuid", ignoring: [["uuid"]])
            let second = try await Exchange.make(server.baseURL, "/uuid")
            let value = try #require(first.json?["uuid"]?.stringValue)
            let uuid = try #require(UUID(uuidString: value))
            #expect(value == value.lowercased())
            #expect(uuid.uuidString.dropFirst(14).first == "4")
            #expect(first.json != second.json)
        }
    }

    @Test func unknownRoutesAndMethodsAnswerLikeFlask() async throws {
        try await TestServer.withRunningServer { server in
            let missing = try await expectSameAsHttpbin(server, "/no/such/route", comparingBody: .none)
            #expect(missing.status == 404)
            // Flask lists Allow in Python's set order, which varies by process: compare as sets.
            func allowed(_ exchange: Exchange) -> Set<String> {
                Set(exchange.headers["Allow"].flatMap { $0.split(separator: ",").map { String($0.trimmingSpaces()) } })
            }
            let wrongMethod = try await expectSameAsHttpbin(server, "/get", method: .POST, comparingBody: .none)
            #expect(wrongMethod.status == 405)
            #expect(allowed(wrongMethod) == ["GET", "HEAD", "OPTIONS"])
            let options = try await expectSameAsHttpbin(
                server,
                "/anything",
                method: .OPTIONS,
                comparingHeaders: ["Access-Control-Allow-Methods"],
                comparingBody: .none
            )
            #expect(options.status == 200)
            #expect(options.body.isEmpty)
            #expect(allowed(options) == ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"])
            if let httpbin = Httpbin.url {
                #expect(allowed(try await Exchange.make(httpbin, "/get", method: .POST)) == allowed(wrongMethod))
                #expect(allowed(try await Exchange.make(httpbin, "/anything", method: .OPTIONS)) == allowed(options))
            }
            let head = try await expectSameAsHttpbin(
                server,
                "/json",
                method: .HEAD,
                comparingHeaders: ["Content-Type", "Content-Length"],
                comparingBody: .none
            )
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.headers["Content-Length"].first.flatMap { Int($0) } ?? 0 > 100)
        }
    }

    @Test func corsHeadersEchoTheOrigin() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/get",
                headers: [("Origin", "https://example.org")],
                comparingHeaders: ["Access-Control-Allow-Origin", "Access-Control-Allow-Credentials"]
            )
            #expect(answer.headers["Access-Control-Allow-Origin"] == ["https://example.org"])
            #expect(answer.headers["Access-Control-Allow-Credentials"] == ["true"])
        }
    }
}
