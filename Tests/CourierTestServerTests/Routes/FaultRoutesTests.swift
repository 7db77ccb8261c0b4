import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Testing

@testable import CourierTestServer

@Suite struct FaultRoutesTests {
    private func get(_ target: String, _ extraHeaders: String = "") -> String {
        "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extraHeaders)\r\n"
    }

    @Test func dropClosesAfterTheGivenBodyBytes() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(port: server.port, request: get("/fault/drop/100?after=30"))
            #expect(result.ending == .closed)
            #expect(result.head.contains("Content-Length: 100"))
            #expect(result.head.contains("Accept-Ranges: bytes") && result.head.contains("ETag: range100"))
            #expect(result.body == Array("abcdefghijklmnopqrstuvwxyzabcd".utf8))
        }
    }

    private func post(_ target: String, declaring length: Int, sending sent: Int) -> String {
        "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(length)\r\n\r\n"
            + String(repeating: "x", count: sent)
    }

    @Test func anUploadResetEndsTheConnectionAfterTheGivenBodyBytes() async throws {
        try await TestServer.withRunningServer { server in
            let cut = try await RawConnection.exchange(
                port: server.port,
                request: post("/fault/upload/reset?after=10", declaring: 100, sending: 50)
            )
            #expect(cut.ending == .reset)
            #expect(cut.head.isEmpty)
            // A body shorter than `after` is reset at its end.
            let short = try await RawConnection.exchange(
                port: server.port,
                request: post("/fault/upload/reset?after=1000", declaring: 20, sending: 20)
            )
            #expect(short.ending == .reset)
        }
    }

    @Test func anUploadStallNeverAnswersAndClosesAfterTheWait() async throws {
        try await TestServer.withRunningServer { server in
            // Half the declared body: the server stops reading and closes after a second.
            let start = ContinuousClock.now
            let stalled = try await RawConnection.exchange(
                port: server.port,
                request: post("/fault/upload/stall?seconds=1", declaring: 100, sending: 50),
                timeout: .seconds(20)
            )
            #expect(stalled.ending == .closed)
            #expect(stalled.head.isEmpty)
            #expect(ContinuousClock.now - start >= .milliseconds(900))
        }
    }

    @Test func dropCanResetInstead() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: get("/fault/drop/100000?after=1000&mode=reset")
            )
            #expect(result.ending == .reset)
            #expect(result.body.count <= 1000)
        }
    }

    @Test func dropHonoursRangeSoAClientCanResume() async throws {
        try await TestServer.withRunningServer { server in
            let first = try await RawConnection.exchange(
                port: server.port,
                request: get("/fault/drop/60?after=25&key=resume")
            )
            #expect(first.body.count == 25)
            let rest = try await Exchange.make(
                server.baseURL,
                "/fault/drop/60?after=25&key=resume",
                headers: [("Range", "bytes=25-"), ("If-Range", "range60")]
            )
            #expect(rest.status == 206)
            #expect(rest.headers["Content-Range"] == ["bytes 25-59/60"])
            let whole = try await Exchange.make(server.baseURL, "/range/60")
            #expect(first.body + rest.body == whole.body)
            #expect(server.attempts(forKey: "resume") == 2)
        }
    }

    @Test func closeAndResetEndTheConnectionWithoutAnAnswer() async throws {
        try await TestServer.withRunningServer { server in
            let closed = try await RawConnection.exchange(port: server.port, request: get("/fault/close"))
            #expect(closed.ending == .closed && closed.bytes.isEmpty)
            let reset = try await RawConnection.exchange(port: server.port, request: get("/fault/reset"))
            #expect(reset.ending == .reset && reset.bytes.isEmpty)
            await #expect(throws: (any Error).self) { try await Exchange.make(server.baseURL, "/fault/reset") }
        }
    }

    @Test func wrongContentLengthPromisesMoreThanItSends() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: get("/fault/content-length/10?declared=50")
            )
            #expect(result.head.contains("Content-Length: 50"))
            #expect(result.body == Array("abcdefghij".utf8))
            #expect(result.ending == .closed)
            await #expect(throws: (any Error).self) {
                try await Exchange.make(server.baseURL, "/fault/content-length/10?declared=50")
            }
        }
    }

    @Test func wrongContentLengthCanPromiseLess() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: get("/fault/content-length/10?declared=4")
            )
            #expect(result.head.contains("Content-Length: 4"))
            #expect(result.body == Array("abcdefghij".utf8), "the extra bytes follow on the wire")
        }
    }

    @Test func hangNeverAnswersUntilTheClientGivesUp() async throws {
        try await TestServer.withRunningServer { server in
            _ = await #expect(throws: HTTPClientError.deadlineExceeded) {
                try await Exchange.make(server.baseURL, "/fault/hang", timeout: .milliseconds(300))
            }
        }
    }

    @Test func hangEndsAfterItsLimit() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(port: server.port, request: get("/fault/hang?seconds=0.2"))
            #expect(result.ending == .closed && result.bytes.isEmpty)
        }
    }

    @Test func serverLimitBoundsEveryWait() async throws {
        let configuration = TestServer.Configuration { $0.maximumWait = .seconds(1) }
        try await TestServer.withRunningServer(configuration: configuration) { server in
            let result = try await RawConnection.exchange(port: server.port, request: get("/fault/hang?seconds=100"))
            // The server ended the wait: with a FIN, or a reset when it closed before reading the
            // request (a loaded machine).
            #expect(result.ending != .timedOut)
            #expect(result.bytes.isEmpty, "\(result.text)")
            let start = NIODeadline.now()
            // Uncapped, /delay/10 takes 10 s; capped at 1 s it ends well within 8 s, even on a loaded machine.
            let delayed = try await Exchange.make(server.baseURL, "/delay/10")
            #expect(delayed.status == 200)
            #expect(NIODeadline.now() - start < .seconds(8))
        }
    }

    @Test func retryAfterFailsTheFirstTimesThenSucceeds() async throws {
        try await TestServer.withRunningServer { server in
            for attempt in 1...2 {
                let answer = try await Exchange.make(server.baseURL, "/fault/retry-after/k1?times=2&seconds=3")
                #expect(answer.status == 503)
                #expect(answer.headers["Retry-After"] == ["3"])
                #expect(answer.json?["attempts"] == .int(attempt))
            }
            let success = try await Exchange.make(server.baseURL, "/fault/retry-after/k1?times=2&seconds=3")
            #expect(success.status == 200)
            #expect(success.json?["attempts"] == .int(3))
            #expect(server.attempts(forKey: "k1") == 3)
            let count = try await Exchange.make(server.baseURL, "/fault/attempts/k1")
            #expect(count.json == .object(["key": .string("k1"), "attempts": .int(3)]))
        }
    }

    @Test func retryAfterCanSay429AndAnHTTPDate() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(
                server.baseURL,
                "/fault/retry-after/k2?status=429&seconds=60&date=true"
            )
            #expect(answer.status == 429)
            let value = try #require(answer.headers["Retry-After"].first)
            #expect(value.hasSuffix(" GMT") && value.count == 29)
        }
    }

    @Test func keysAreCountedPerServer() async throws {
        try await TestServer.withRunningServer { first in
            try await TestServer.withRunningServer { second in
                _ = try await Exchange.make(first.baseURL, "/fault/retry-after/shared")
                #expect(first.attempts(forKey: "shared") == 1)
                #expect(second.attempts(forKey: "shared") == 0)
            }
        }
    }

    @Test(arguments: [("status", RawConnection.Ending.closed), ("drop", .closed), ("reset", .reset)])
    func flakyFailsTheFirstTimes(fault: String, ending: RawConnection.Ending) async throws {
        try await TestServer.withRunningServer { server in
            let target = "/fault/flaky/f?times=1&fault=\(fault)&status=502"
            let failure = try await RawConnection.exchange(
                port: server.port,
                request: get(target, "Connection: close\r\n")
            )
            #expect(failure.ending == ending)
            if fault == "status" {
                #expect(failure.head.hasPrefix("HTTP/1.1 502"))
            } else {
                #expect(failure.bytes.isEmpty)
            }
            let success = try await Exchange.make(server.baseURL, target)
            #expect(success.status == 200 && success.json?["attempts"] == .int(2))
        }
    }

    @Test func slowHeadersTrickleOut() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: get("/fault/slow-headers?seconds=0.6", "Connection: close\r\n")
            )
            #expect(result.head.hasPrefix("HTTP/1.1 200 OK"))
            // Reads may merge on a busy machine, so check when the last byte came, not how many
            // reads there were: it cannot arrive before the server paced it out.
            #expect((result.arrivalTimes.last ?? 0) >= 0.5, "the head trickles out over the requested time")
            #expect(JSONValue.parse(result.body)?["url"] != nil)
        }
    }

    @Test func hugeHeaderHasTheRequestedSize() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: get("/fault/huge-header?bytes=200000", "Connection: close\r\n")
            )
            let line = try #require(result.head.split(separator: "\r\n").first { $0.hasPrefix("X-Huge-Header: ") })
            #expect(line.count == "X-Huge-Header: ".count + 200_000)
            await #expect(throws: (any Error).self, "a default client refuses a 200 kB head") {
                try await Exchange.make(server.baseURL, "/fault/huge-header?bytes=200000")
            }
            let modest = try await Exchange.make(server.baseURL, "/fault/huge-header?bytes=1000")
            #expect(modest.headers["X-Huge-Header"].first?.count == 1000)
        }
    }
}
