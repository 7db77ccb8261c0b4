import AsyncHTTPClient
import NIOCore
import NIOPosix
import Testing

@testable import CourierTestServer

@Suite struct TestServerTests {
    @Test func manyServersRunAtOnceOnTheirOwnPorts() async throws {
        let servers = try await withThrowingTaskGroup(of: TestServer.self) { group in
            for _ in 0..<8 { group.addTask { try await TestServer.start() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(servers.map(\.port)).count == 8)
        for server in servers {
            #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
            let answer = try await Exchange.make(server.baseURL, "/get")
            #expect(answer.json?["url"] == .string("http://127.0.0.1:\(server.port)/get"))
        }
        // Each shutdown ends a connection held open on that server (a freed port could be taken by
        // another test's server at once, so connecting afterwards would prove nothing).
        for server in servers {
            async let held = RawConnection.exchange(
                port: server.port,
                request: "GET /fault/hang HTTP/1.1\r\nHost: x\r\n\r\n",
                timeout: .seconds(30)
            )
            try await server.waitForRequests(2)
            try await server.shutdown()
            #expect(try await held.ending == .closed)
        }
    }

    @Test func shutdownEndsConnectionsInFlight() async throws {
        let server = try await TestServer.start()
        async let hanging = RawConnection.exchange(
            port: server.port,
            request: "GET /fault/hang HTTP/1.1\r\nHost: x\r\n\r\n",
            timeout: .seconds(30)
        )
        // Wait until the server holds the request, then shut down under it.
        try await server.waitForRequests(1)
        let start = NIODeadline.now()
        try await server.shutdown()
        let result = try await hanging
        #expect(result.ending == .closed)
        #expect(NIODeadline.now() - start < .seconds(10))
        try await server.shutdown()
    }

    @Test func waitForRequestsTimesOutWhenNothingArrives() async throws {
        try await TestServer.withRunningServer { server in
            await #expect(throws: TestServerError.timedOut) {
                try await server.waitForRequests(1, timeout: .milliseconds(50))
            }
            _ = try await Exchange.make(server.baseURL, "/get")
            try await server.waitForRequests(1, timeout: .seconds(5))
        }
    }

    @Test func withRunningServerShutsDownWhenTheBodyThrows() async throws {
        struct Expected: Error {}
        let held = Task<RawConnection.Result?, any Error> { nil }
        var connection = held
        await #expect(throws: Expected.self) {
            try await TestServer.withRunningServer { server in
                connection = Task {
                    try await RawConnection.exchange(
                        port: server.port,
                        request: "GET /fault/hang HTTP/1.1\r\nHost: x\r\n\r\n",
                        timeout: .seconds(30)
                    )
                }
                try await server.waitForRequests(1)
                throw Expected()
            }
        }
        #expect(try await connection.value?.ending == .closed, "the shutdown closed the held connection")
    }

    @Test func bindingATakenPortFails() async throws {
        try await TestServer.withRunningServer { server in
            let taken = TestServer.Configuration { $0.port = server.port }
            await #expect(throws: (any Error).self) { _ = try await TestServer.start(configuration: taken) }
        }
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        try await TestServer.withRunningServer { server in
            let request = "GET /uuid HTTP/1.1\r\nHost: x\r\n\r\n"
            let result = try await RawConnection.exchange(
                port: server.port,
                request: request + request + "GET /status/204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            #expect(result.text.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "two pipelined 200s")
            #expect(result.text.contains("HTTP/1.1 204 No Content"))
            #expect(result.ending == .closed, "Connection: close ends it")
            // The two 200s come before the 204, in the order asked.
            var searchFrom = result.text.startIndex
            for status in ["200 OK", "200 OK", "204 No Content"] {
                let found = try #require(
                    result.text.range(of: "HTTP/1.1 " + status, range: searchFrom..<result.text.endIndex)
                )
                searchFrom = found.upperBound
            }
        }
    }

    @Test func pipelinedRequestsWaitForASlowAnswer() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request:
                    "GET /delay/0.3 HTTP/1.1\r\nHost: x\r\n\r\nGET /ip HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            let delayed = try #require(result.text.range(of: "\"url\": \"http://x/delay/0.3\""))
            let ip = try #require(result.text.range(of: "\"origin\": \"127.0.0.1\"\n}"))
            #expect(delayed.lowerBound < ip.lowerBound)
        }
    }

    @Test func http10ClosesAfterTheAnswer() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(port: server.port, request: "GET /stream/2 HTTP/1.0\r\n\r\n")
            #expect(result.ending == .closed)
            #expect(!result.head.contains("chunked"), "no chunked framing for HTTP/1.0")
            #expect(result.body.split(separator: UInt8(ascii: "\n")).count == 2)
        }
    }

    @Test func malformedRequestsGet400() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(port: server.port, request: "NOT HTTP AT ALL\r\n\r\n")
            #expect(result.head.hasPrefix("HTTP/1.1 400 Bad Request"))
            #expect(result.ending == .closed)
        }
    }

    @Test func expectContinueIsHonoured() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: "POST /post HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n"
                    + "Connection: close\r\n\r\nhi"
            )
            #expect(result.text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK"))
        }
    }

    @Test func headAnswersCarryNoBody() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: "HEAD /bytes/100 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            #expect(result.head.contains("Content-Length: 100"))
            #expect(result.body.isEmpty)
        }
    }
}
