import NIOHTTP1
import Testing

@testable import CourierTestServer

@Suite struct StatusRoutesTests {
    @Test(arguments: [200, 201, 204, 301, 302, 303, 304, 307, 400, 401, 402, 404, 406, 407, 418, 429, 500, 503])
    func answersWithTheRequestedCode(code: Int) async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/status/\(code)",
                // Not Proxy-Authenticate: gunicorn drops it as a hop-by-hop header; this server sends it.
                comparingHeaders: ["Content-Type", "Location", "WWW-Authenticate"],
                comparingBody: code == 406 ? .json : .none
            )
            #expect(answer.status == code)
            if [301, 302, 303, 307].contains(code) { #expect(answer.headers["Location"] == ["/redirect/1"]) }
            if code == 401 { #expect(answer.headers["WWW-Authenticate"] == ["Basic realm=\"Fake Realm\""]) }
            if code == 418 { #expect(answer.text.contains("teapot")) }
            if code == 407 { #expect(answer.headers["Proxy-Authenticate"] == ["Basic realm=\"Fake Realm\""]) }
            if code == 304 { #expect(answer.headers["Content-Type"].isEmpty && answer.body.isEmpty) }
        }
    }

    @Test(arguments: [HTTPMethod.POST, .PUT, .DELETE, .PATCH])
    func acceptsAnyMethod(method: HTTPMethod) async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(server, "/status/202", method: method, comparingBody: .none)
            #expect(answer.status == 202)
        }
    }

    @Test func weightedChoicesOnlyYieldListedCodes() async throws {
        try await TestServer.withRunningServer { server in
            var seen: Set<Int> = []
            for _ in 0..<30 {
                seen.insert(try await Exchange.make(server.baseURL, "/status/201:1,202:1,500:0").status)
            }
            #expect(seen.isSubset(of: [201, 202]))
            #expect(seen.count == 2)
        }
    }

    @Test(arguments: ["abc", "200,x", "200:y", "99"])
    func malformedCodesAre400(codes: String) async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(server.baseURL, "/status/\(codes)")
            #expect(answer.status == 400)
            #expect(answer.text == "Invalid status code")
        }
    }

    @Test func pickCodeHonoursWeights() {
        #expect(StatusRoutes.pickCode("404") == 404)
        #expect(StatusRoutes.pickCode("200:0,503:1") == 503)
        #expect(StatusRoutes.pickCode("") == nil)
    }
}
