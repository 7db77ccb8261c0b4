import Foundation
import FuzzSupport

@testable import Courier

// A streamed body cut into chunks (sizes from the first byte): the JSON-lines splitter,
// `LineSplitter.init(maximumLineLength:)`, `lines(in:)` then `remainder()`, must give the lines of
// the whole body wherever the chunks end, or fail exactly when a line passes the limit;
// `UTF8PieceDecoder.decode(_:)` (`responseStreamString`) must give the text of the whole body.
// Each line goes through `DataStreamRequest.decode(_:from:with:)` as JSON.
@main
enum Main {
    static func main() {
        runFuzzer(testOneInput)
    }
}

/// One input; libFuzzer calls it over and over. Exported under libFuzzer's name as well, for the
/// case where the linker picks libFuzzer's own `main` over this program's.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let seed = input.takeByte()
    let chunks = input.restInChunks(seed: seed, maximumChunk: seed & 0x80 == 0 ? 16 : 4096)

    // A small line limit half the time, so that failing a long line is fuzzed too.
    let limit = seed & 0x40 == 0 ? DataStreamRequest.defaultMaximumLineLength : 1 + Int(seed & 0x3F)
    let splitter = LineSplitter(maximumLineLength: limit)
    var lines: [Data] = []
    var failed = false
    do {
        for chunk in chunks { lines += try splitter.lines(in: Data(chunk)) }
        if let last = try splitter.remainder() { lines.append(last) }
    } catch {
        failed = true
    }
    let allLines = input.rest.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        .map { $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0 }
    let expected = allLines.filter { !$0.isEmpty }.map { Data($0) }
    let tooLong = allLines.contains { $0.count > limit }
    fuzzCheck(failed == tooLong, "a line over the limit is not failed, or one within it is")
    if failed {
        fuzzCheck(expected.starts(with: lines), "lines before the failure are not the body's")
    } else {
        fuzzCheck(lines == expected, "the lines depend on how the body is chunked")
    }
    let decoder = JSONDecoder()
    for line in lines.prefix(16) {
        _ = DataStreamRequest.decode(JSONValueProbe.self, from: line, with: decoder)
    }

    let pieces = UTF8PieceDecoder()
    var text = ""
    for chunk in chunks { text += pieces.decode(Data(chunk)) ?? "" }
    // What is held back at the end (a character cut off by the body's end) is the same however
    // the body was chunked.
    let body = Data(input.rest)
    let whole = String(decoding: body[..<UTF8PieceDecoder.endOfWholeCharacters(in: body)], as: UTF8.self)
    fuzzCheck(text == whole, "the text depends on how the body is chunked")
    return 0
}

/// Any JSON value, decoded the way a stream of records would be.
private struct JSONValueProbe: Decodable, Sendable {
    init(from decoder: any Decoder) throws {
        _ = try decoder.singleValueContainer()
    }
}
