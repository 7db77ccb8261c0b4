import NIOCore
import NIOHTTP1

/// `/lines`: a JSON-lines body of made-up size, for testing line splitting.
///
/// `count` lines (default 10) of `length` bytes each (default 16, at least 2), each a JSON string
/// of `a`s (`"aaaa"`) followed by a line break (`\r\n` with `crlf=1`, else `\n`), sent chunked in
/// chunks of `chunk_size` bytes (default 10 KiB; 1 cuts every line into one-byte pieces).
/// Generated as it is sent, in constant memory.
enum LineRoutes {
    static var routes: [Route] {
        [
            Route("/lines") { request, _ in
                .respond(
                    lines(
                        count: max(0, request.queryInteger("count", default: 10)),
                        length: max(2, request.queryInteger("length", default: 16)),
                        crlf: request.queryInteger("crlf", default: 0) == 1,
                        chunkSize: Routes.chunkSize(request.queryInteger("chunk_size", default: 10 * 1024))
                    )
                )
            }
        ]
    }

    /// The body described above; its total size is capped at ``Routes/largestGeneratedBody``.
    static func lines(count: Int, length: Int, crlf: Bool, chunkSize: Int) -> ServerResponse {
        let breakLength = crlf ? 2 : 1
        let lineTotal = length + breakLength
        let total = min(
            count.multipliedReportingOverflow(by: lineTotal).overflow ? .max : count * lineTotal,
            Routes.largestGeneratedBody
        )
        var offset = 0
        return ServerResponse(
            status: .ok,
            headers: [("Content-Type", "application/x-ndjson")],
            body: .stream(
                BodyStream(length: nil) { allocator in
                    guard offset < total else { return nil }
                    let size = min(chunkSize, total - offset)
                    var buffer = allocator.buffer(capacity: size)
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { pointer in
                        for index in 0..<size {
                            let position = (offset + index) % lineTotal
                            let byte: UInt8
                            switch position {
                            case 0, length - 1: byte = UInt8(ascii: "\"")
                            case length: byte = crlf ? UInt8(ascii: "\r") : UInt8(ascii: "\n")
                            case length + 1: byte = UInt8(ascii: "\n")
                            default: byte = UInt8(ascii: "a")
                            }
                            pointer[index] = byte
                        }
                        return size
                    }
                    offset += size
                    return buffer
                }
            )
        )
    }
}
