import CourierHashes
import CourierTestSupport
import Testing

@testable import CourierTestServer

@Suite struct MultipartParserTests {
    /// A body with a preamble, an epilogue, near-miss delimiters inside the content, a part with no
    /// headers but its disposition, an empty part and a binary part.
    static let boundary = "XyZ-boundary"
    static let title = Array("Hello\r\n--XyZ-boundar\r\n--XyZ\r\n-".utf8)
    static let binary = [UInt8]((0..<1500).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    static let body: [UInt8] = {
        var body = Array("preamble, ignored\r\n".utf8)
        body += Array("--XyZ-boundary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n".utf8)
        body += title
        body += Array("\r\n--XyZ-boundary  \r\n".utf8)  // transport padding after the delimiter
        body += Array("Content-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".bin\"\r\n".utf8)
        body += Array("Content-Type: application/octet-stream\r\n\r\n".utf8)
        body += binary
        body += Array("\r\n--XyZ-boundary\r\ncontent-disposition: form-data; name=empty\r\n\r\n".utf8)
        body += Array("\r\n--XyZ-boundary--\r\nepilogue, ignored\r\n--XyZ-boundary\r\n".utf8)
        return body
    }()

    static let expectedParts = [
        MultipartParser.PartSummary(
            name: "title",
            filename: nil,
            contentType: nil,
            bytes: title.count,
            sha256: SHA256.hexDigest(of: title)
        ),
        MultipartParser.PartSummary(
            name: "file",
            filename: "a \"b\".bin",
            contentType: "application/octet-stream",
            bytes: binary.count,
            sha256: SHA256.hexDigest(of: binary)
        ),
        MultipartParser.PartSummary(
            name: "empty",
            filename: nil,
            contentType: nil,
            bytes: 0,
            sha256: SHA256.hexDigest(of: [UInt8]())
        ),
    ]

    /// Feeds `body` split at `splits` (offsets into it) and collects what the parser reports.
    private func parse(
        _ body: [UInt8],
        boundary: String = boundary,
        splits: [Int]
    ) -> (parts: [MultipartParser.PartSummary], failure: MultipartParser.Malformed?) {
        var parser = MultipartParser(boundary: boundary)
        var parts: [MultipartParser.PartSummary] = []
        var start = 0
        for end in splits.sorted() + [body.count] where end >= start {
            switch parser.consume(body[start..<end]) {
            case .continueReading(let ended): parts += ended
            case .fail(let malformed): return (parts, malformed)
            }
            start = end
        }
        switch parser.finish() {
        case .complete: return (parts, nil)
        case .fail(let malformed): return (parts, malformed)
        }
    }

    @Test func parsesAWholeBody() {
        let result = parse(Self.body, splits: [])
        #expect(result.failure == nil)
        #expect(result.parts == Self.expectedParts)
    }

    @Test func parsesABodyFedOneByteAtATime() {
        let result = parse(Self.body, splits: Array(1..<Self.body.count))
        #expect(result.failure == nil)
        #expect(result.parts == Self.expectedParts)
    }

    @Test func parsesABodySplitAnywhere() async {
        await cpuBound {
            var generator = SplitMix64(seed: 0x5EED)
            for _ in 0..<200 {
                let count = Int.random(in: 1...12, using: &generator)
                let splits = (0..<count).map { _ in Int.random(in: 0...Self.body.count, using: &generator) }
                let result = parse(Self.body, splits: splits)
                #expect(result.failure == nil, "splits \(splits.sorted())")
                #expect(result.parts == Self.expectedParts, "splits \(splits.sorted())")
            }
        }
    }

    @Test func parsesEverySplitAroundEachDelimiter() async {
        await cpuBound {
            // Every single split point, so each delimiter is cut at each of its bytes.
            for split in 0...Self.body.count {
                let result = parse(Self.body, splits: [split])
                #expect(result.failure == nil && result.parts == Self.expectedParts, "split at \(split)")
            }
        }
    }

    @Test func reportsPartsAsTheyEnd() {
        var parser = MultipartParser(boundary: "b")
        #expect(
            parser.consume(Array("--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1".utf8))
                == .continueReading(endedParts: [])
        )
        guard case .continueReading(let ended) = parser.consume(Array("\r\n--b\r\n".utf8)) else {
            Issue.record("the body was refused")
            return
        }
        #expect(ended.map(\.name) == ["a"])
        #expect(
            parser.finish()
                == .fail(MultipartParser.Malformed(reason: "the body ended before its closing boundary delimiter"))
        )
    }

    @Test func anEmptyFormIsJustTheClosingDelimiter() {
        let result = parse(Array("--b--\r\n".utf8), boundary: "b", splits: [])
        #expect(result.failure == nil)
        #expect(result.parts.isEmpty)
    }

    @Test(arguments: [
        ("", "the body holds no boundary delimiter"),
        ("no delimiter at all", "the body holds no boundary delimiter"),
        (
            "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nunfinished",
            "the body ended before its closing boundary delimiter"
        ),
        (
            "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--b",
            "the body ended before its closing boundary delimiter"
        ),
        ("--bX\r\n", "a boundary delimiter is followed by neither CRLF nor --"),
        ("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--", "a part has no Content-Disposition with a name"),
        (
            "--b\r\nContent-Disposition: attachment; name=a\r\n\r\nx\r\n--b--",
            "a part's Content-Disposition is not form-data"
        ),
        ("--b\r\nno colon here\r\n\r\nx\r\n--b--", "a part header line has no colon"),
    ])
    func refusesAMalformedBody(body: String, reason: String) {
        for splits in [[], Array(1..<max(1, body.utf8.count))] {
            let result = parse(Array(body.utf8), boundary: "b", splits: splits)
            #expect(result.failure == MultipartParser.Malformed(reason: reason))
        }
    }

    @Test func refusesHeadersLongerThanTheLimit() {
        var parser = MultipartParser(boundary: "b")
        #expect(parser.consume(Array("--b\r\nX-Long: ".utf8)) == .continueReading(endedParts: []))
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: MultipartParser.maximumHeaderBytes)
        guard case .fail = parser.consume(long) else {
            Issue.record("a header block over the limit was accepted")
            return
        }
        guard case .fail = parser.consume(Array("anything".utf8)), case .fail = parser.finish() else {
            Issue.record("a failed body finished")
            return
        }
    }

    @Test func holdsOnlyADelimiterWorthOfContent() async {
        await cpuBound {
            // A large part fed in 64 KiB chunks: the content passes through, counted and hashed.
            var parser = MultipartParser(boundary: "b")
            _ = parser.consume(Array("--b\r\nContent-Disposition: form-data; name=big\r\n\r\n".utf8))
            let chunk = [UInt8]((0..<65_536).map { UInt8(truncatingIfNeeded: $0 % 251) })
            var expected = SHA256()
            for _ in 0..<64 {
                #expect(parser.consume(chunk) == .continueReading(endedParts: []))
                expected.update(chunk)
            }
            #expect(
                parser.consume(Array("\r\n--b--".utf8))
                    == .continueReading(
                        endedParts: [
                            .init(
                                name: "big",
                                filename: nil,
                                contentType: nil,
                                bytes: 64 * chunk.count,
                                sha256: expected.hexDigest()
                            )
                        ]
                    )
            )
            #expect(parser.finish() == .complete)
        }
    }
}
