import NIOCore
import NIOHTTP1
import Testing

@testable import CourierTestServer

@Suite struct DynamicDataRoutesTests {
    @Test func seededBytesMatchHttpbinByteForByte() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/bytes/1000?seed=1234",
                comparingHeaders: ["Content-Type", "Content-Length"],
                comparingBody: .bytes
            )
            #expect(answer.body.count == 1000)
            #expect(answer.headers["Content-Type"] == ["application/octet-stream"])
            var generator = PythonRandom(seed: 1234)
            #expect(answer.body == (0..<1000).map { _ in generator.nextByte() })
        }
    }

    @Test func unseededBytesDiffer() async throws {
        try await TestServer.withRunningServer { server in
            let first = try await Exchange.make(server.baseURL, "/bytes/64")
            let second = try await Exchange.make(server.baseURL, "/bytes/64")
            #expect(first.body.count == 64 && second.body.count == 64)
            #expect(first.body != second.body)
        }
    }

    @Test func bytesGoBeyondHttpbinsLimitInConstantMemory() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(server.baseURL, "/bytes/3000000?seed=7")
            #expect(answer.body.count == 3_000_000)
            #expect(answer.headers["Content-Length"] == ["3000000"])
        }
    }

    @Test func streamBytesAreChunkedAndSeedable() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/stream-bytes/5000?seed=99&chunk_size=700",
                comparingHeaders: ["Content-Type"],
                comparingBody: .bytes
            )
            #expect(answer.headers["Transfer-Encoding"] == ["chunked"])
            #expect(answer.headers["Content-Length"].isEmpty)
            var generator = PythonRandom(seed: 99)
            #expect(answer.body == (0..<5000).map { _ in generator.nextByte() })
        }
    }

    @Test func streamSendsJSONLines() async throws {
        try await TestServer.withRunningServer { server in
            let ours = try await Exchange.make(server.baseURL, "/stream/4?x=1")
            let lines = ours.text.split(separator: "\n")
            #expect(lines.count == 4)
            #expect(ours.headers["Transfer-Encoding"] == ["chunked"])
            for (index, line) in lines.enumerated() {
                let json = try #require(JSONValue.parse(String(line)))
                #expect(json["id"] == .int(index))
                #expect(json["args"] == .object(["x": .string("1")]))
            }
            if let httpbin = Httpbin.url {
                let theirs = try await Exchange.make(httpbin, "/stream/4?x=1")
                let normalizedOurs = lines.compactMap { JSONValue.parse(String($0)) }.map {
                    normalize($0, authority: Httpbin.authority(of: server.baseURL), ignoring: [])
                }
                let normalizedTheirs = theirs.text.split(separator: "\n").compactMap { JSONValue.parse(String($0)) }.map
                {
                    normalize($0, authority: Httpbin.authority(of: httpbin), ignoring: [])
                }
                #expect(normalizedOurs == normalizedTheirs)
            }
            let capped = try await Exchange.make(server.baseURL, "/stream/1000")
            #expect(capped.text.split(separator: "\n").count == 100)
        }
    }

    @Test func rangeServesTheWholePatternWithValidators() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/range/30",
                comparingHeaders: ["ETag", "Accept-Ranges", "Content-Range", "Content-Length"],
                comparingBody: .bytes
            )
            #expect(answer.status == 200)
            #expect(answer.text == "abcdefghijklmnopqrstuvwxyzabcd")
            #expect(answer.headers["ETag"] == ["range30"])
            #expect(answer.headers["Accept-Ranges"] == ["bytes"])
        }
    }

    @Test(arguments: [
        ("bytes=5-9", "fghij", "bytes 5-9/30"), ("bytes=27-", "bcd", "bytes 27-29/30"),
        ("bytes=-4", "abcd", "bytes 26-29/30"),
    ])
    func rangeAnswers206(range: String, expected: String, contentRange: String) async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/range/30",
                headers: [("Range", range)],
                comparingHeaders: ["ETag", "Content-Range", "Content-Length"],
                comparingBody: .bytes
            )
            #expect(answer.status == 206)
            #expect(answer.text == expected)
            #expect(answer.headers["Content-Range"] == [contentRange])
        }
    }

    @Test func unsatisfiableRangesAnswer416() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/range/30",
                headers: [("Range", "bytes=40-50")],
                comparingHeaders: ["Content-Range"],
                comparingBody: .bytes
            )
            #expect(answer.status == 416)
            #expect(answer.headers["Content-Range"] == ["bytes */30"])
            #expect(answer.body.isEmpty)
        }
    }

    @Test func ifRangeDecidesBetweenPartAndWhole() async throws {
        try await TestServer.withRunningServer { server in
            let matching = try await Exchange.make(
                server.baseURL,
                "/range/30",
                headers: [("Range", "bytes=10-"), ("If-Range", "range30")]
            )
            #expect(matching.status == 206 && matching.text == "klmnopqrstuvwxyzabcd")
            let stale = try await Exchange.make(
                server.baseURL,
                "/range/30",
                headers: [("Range", "bytes=10-"), ("If-Range", "\"range29\"")]
            )
            #expect(stale.status == 200 && stale.body.count == 30)
        }
    }

    @Test func invalidRangeSizesAre404() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/range/0",
                comparingHeaders: ["ETag"],
                comparingBody: .none
            )
            #expect(answer.status == 404)
        }
    }

    @Test func rangeDurationSpreadsTheBody() async throws {
        try await TestServer.withRunningServer { server in
            let result = try await RawConnection.exchange(
                port: server.port,
                request: "GET /range/40?chunk_size=10&duration=0.8 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            #expect(result.body.count == 40)
            #expect((result.arrivalTimes.last ?? 0) >= 0.4, "chunks arrive over the requested duration")
        }
    }

    @Test func dripSendsAsterisksOverTime() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/drip?numbytes=5&duration=0.2&code=201",
                comparingHeaders: ["Content-Type", "Content-Length"],
                comparingBody: .bytes
            )
            #expect(answer.status == 201)
            #expect(answer.text == "*****")
            let result = try await RawConnection.exchange(
                port: server.port,
                request: "GET /drip?numbytes=4&duration=0.6&delay=0.3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            #expect(result.body == Array("****".utf8))
            #expect((result.arrivalTimes.first ?? 0) >= 0.25, "the head waits for the delay")
            #expect((result.arrivalTimes.last ?? 0) >= 0.6, "the bytes spread over the duration")
            let invalid = try await expectSameAsHttpbin(server, "/drip?numbytes=0", comparingBody: .bytes)
            #expect(invalid.status == 400)
        }
    }

    @Test func delayWaitsBeforeAnswering() async throws {
        try await TestServer.withRunningServer { server in
            let start = NIODeadline.now()
            let answer = try await expectSameAsHttpbin(server, "/delay/0.5", method: .POST, body: Array("x".utf8))
            #expect(NIODeadline.now() - start >= .milliseconds(500))
            #expect(answer.json?["data"] == .string("x"))
        }
    }
}

@Suite struct TimeAmountFromSecondsTests {
    @Test func infinityMeansTheCapAndNonsenseMeansZero() {
        #expect(TimeAmount.fromSeconds(.infinity, cappedAt: 10) == .seconds(10))
        #expect(TimeAmount.fromSeconds(-.infinity) == .zero)
        #expect(TimeAmount.fromSeconds(.nan) == .zero)
        #expect(TimeAmount.fromSeconds(0.25) == .milliseconds(250))
        #expect(TimeAmount.fromSeconds(1e300) == .seconds(1_000_000_000))
    }
}
