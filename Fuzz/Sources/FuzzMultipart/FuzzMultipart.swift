import FuzzSupport

@testable import CourierTestServerParsers

// A `multipart/form-data` body as a client could upload it to the test server. The first byte
// sets the boundary's length (1 to 70, as `MultipartUploadRoute` allows), the second how the body
// is cut into chunks; the boundary is the next bytes, the body the rest. Calls
// `MultipartParser.init(boundary:)`, `consume(_:)` and `finish()` (whole, then in chunks: the parts
// must not depend on where the chunks end), `FormDecoding.multipartParts(_:boundary:)` and
// `FormDecoding.headerParameter(_:in:)` (via the parsers, and on the body's first line).
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
    let boundaryLength = 1 + Int(input.takeByte()) % 70
    let chunkSeed = input.takeByte()
    let boundary = String(decoding: input.take(boundaryLength), as: UTF8.self)
    let body = Array(input.rest)

    var whole = MultipartParser(boundary: boundary)
    let wholeOutcome = outcome(of: &whole, chunks: [body[...]])
    var chunked = MultipartParser(boundary: boundary)
    let chunkedOutcome = outcome(of: &chunked, chunks: input.restInChunks(seed: chunkSeed, maximumChunk: 64))
    // A header block over the limit fails only when it arrives in pieces (a whole one is already
    // in memory), so the two may differ there and only there.
    let limitReason = "longer than \(MultipartParser.maximumHeaderBytes) bytes"
    // On a failure, parts that ended in earlier chunks were already reported, in the same chunk
    // not: only a success must report the same parts.
    if !wholeOutcome.failure.contains(limitReason), !chunkedOutcome.failure.contains(limitReason) {
        fuzzCheck(wholeOutcome.failure == chunkedOutcome.failure, "the outcome depends on how the body is chunked")
        if wholeOutcome.failure.isEmpty {
            fuzzCheck(wholeOutcome.parts == chunkedOutcome.parts, "the parts depend on how the body is chunked")
        }
    }

    _ = FormDecoding.multipartParts(body, boundary: boundary)
    let firstLine = String(decoding: body.prefix { $0 != 10 }, as: UTF8.self)
    _ = FormDecoding.headerParameter("boundary", in: firstLine)
    return 0
}

private func outcome(
    of parser: inout MultipartParser,
    chunks: [ArraySlice<UInt8>]
) -> (parts: [MultipartParser.PartSummary], failure: String) {
    var parts: [MultipartParser.PartSummary] = []
    for chunk in chunks {
        switch parser.consume(chunk) {
        case .continueReading(let ended): parts += ended
        case .fail(let malformed): return (parts, malformed.reason)
        }
    }
    switch parser.finish() {
    case .complete: return (parts, "")
    case .fail(let malformed): return (parts, malformed.reason)
    }
}
