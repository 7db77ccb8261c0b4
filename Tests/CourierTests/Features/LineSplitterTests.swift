import Foundation
import Testing

@testable import Courier

/// The JSON-lines splitter behind `responseStreamDecodable` and `streamingDecodable`
/// (`DataStreamRequest+Stream.swift`); its behaviour on both transports is in `DataStreamRequestTests`.
@Suite struct LineSplitterTests {
    private func split(_ pieces: [String], limit: Int = 1 << 20) throws -> [String] {
        let splitter = LineSplitter(maximumLineLength: limit)
        var lines: [Data] = []
        for piece in pieces { lines += try splitter.lines(in: Data(piece.utf8)) }
        if let last = try splitter.remainder() { lines.append(last) }
        return lines.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func splitsOnLineFeedsAndCRLFSkippingEmptyLines() throws {
        #expect(try split(["a\nb\r\n\n\r\nc"]) == ["a", "b", "c"])
        #expect(try split(["a\r", "\nb\r"]) == ["a", "b"], "a CR split from its LF, and a last line ending in CR")
        #expect(try split(["", "\n", "x"]) == ["x"])
    }

    @Test func bytePiecesSplitAsOneBlockDoes() throws {
        let text = (0..<500).map { "{\"n\":\($0)}" + ($0 % 3 == 0 ? "\r\n" : "\n") }.joined()
        let whole = try split([text])
        #expect(whole.count == 500 && whole.first == "{\"n\":0}" && whole.last == "{\"n\":499}")
        #expect(try split(text.map { String($0) }) == whole)
        #expect(
            try split(
                stride(from: 0, to: text.utf8.count, by: 7).map { start in
                    let bytes = Array(text.utf8)
                    return String(decoding: bytes[start..<min(start + 7, bytes.count)], as: UTF8.self)
                }
            ) == whole
        )
    }

    /// Lines finished before a line too long in the same piece are returned; the failure comes
    /// with the next call, or at the end.
    @Test func goodLinesBeforeALongOneAreKept() throws {
        let splitter = LineSplitter(maximumLineLength: 4)
        let lines = try splitter.lines(in: Data("ok1\nok2\ntoo-long".utf8))
        #expect(lines.map { String(decoding: $0, as: UTF8.self) } == ["ok1", "ok2"])
        #expect(throws: CourierError.self) { try splitter.lines(in: Data("x".utf8)) }
        #expect(try splitter.lines(in: Data("\nmore\n".utf8)).isEmpty, "reported once")
        let ending = LineSplitter(maximumLineLength: 4)
        _ = try ending.lines(in: Data("ok\nlonger".utf8))
        #expect(throws: CourierError.self) { try ending.remainder() }
    }

    @Test func theLimitCountsTheLineWithoutItsBreak() throws {
        let limit = 10
        let exact = String(repeating: "a", count: limit)
        #expect(try split([exact + "\r\n", exact + "\n", exact], limit: limit) == [exact, exact, exact])
        #expect(try split([exact, "\r", "\n"], limit: limit) == [exact], "a pending CR is not counted")
        #expect(throws: CourierError.self) { try split([exact + "a\n"], limit: limit) }
        #expect(throws: CourierError.self) { try split([exact, "a"], limit: limit) }
        #expect(throws: CourierError.self) { try split([exact + "\r", "a"], limit: limit) }
    }

    @Test func aLineTooLongFailsOnceThenNothingFollows() throws {
        let splitter = LineSplitter(maximumLineLength: 100)
        #expect(try splitter.lines(in: Data("ok\n".utf8)).count == 1)
        do {
            _ = try splitter.lines(in: Data(repeating: UInt8(ascii: "x"), count: 101))
            Issue.record("a 101-byte line passed a limit of 100")
        } catch {
            #expect(error.kind == .streamLineTooLong)
            #expect(error.errorDescription?.contains("100 bytes") == true)
        }
        // Reported once: what follows is dropped.
        #expect(try splitter.lines(in: Data("\nfine\n".utf8)).isEmpty)
        #expect(try splitter.lines(in: Data("more".utf8)).isEmpty)
        #expect(try splitter.remainder() == nil)
    }

    /// A 256 KiB line arriving a byte at a time, then 30,000 short lines a byte at a time: linear
    /// work (a fraction of a second in a debug build), where rescanning the buffer for every
    /// piece took many minutes.
    @Test func splittingIsLinear() async throws {
        let length = 256 << 10
        let (outcome, elapsed) = try await offThePool { () -> (early: Int, long: Int?, short: Int) in
            let splitter = LineSplitter(maximumLineLength: 8 << 20)
            let byte = Data([UInt8(ascii: "a")])
            var early = 0
            for _ in 0..<length { early += try splitter.lines(in: byte).count }
            let long = try splitter.lines(in: Data("\n".utf8)).first?.count
            var count = 0
            let short = Data("{}\n".utf8)
            for _ in 0..<30_000 {
                for index in short.indices { count += try splitter.lines(in: short[index...index]).count }
            }
            return (early, long, count)
        }
        #expect(outcome.early == 0, "no line before its break")
        #expect(outcome.long == length)
        #expect(outcome.short == 30_000)
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }
}
