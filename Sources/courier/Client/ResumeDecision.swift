/// What a download does with the response to its request, given how many bytes the output file
/// already holds (`--continue`): append, start over, stop because the file is complete, or refuse.
///
/// `--continue` resumes a plain partial file, as httpie does: `Range: bytes=N-` and no `If-Range`,
/// since a killed process left no validator to send. A `206` must start exactly at `N`.
enum ResumeDecision: Equatable, Sendable {
    /// Write the body after the `offset` bytes already there; `total` is the whole length when known.
    case append(offset: Int64, total: Int64?)
    /// Write the body from the start, replacing what the file held.
    case restart(total: Int64?)
    /// The file already holds the whole body (`416` naming its very length).
    case alreadyComplete(total: Int64)
    /// Do not touch the file, for this reason.
    case refuse(String)

    /// The decision for a response with `statusCode`, `Content-Range` and `Content-Length`, when
    /// the file holds `existingBytes` (0 for a fresh download).
    static func decide(
        existingBytes: Int64,
        statusCode: Int,
        contentRange: String?,
        contentLength: Int64?
    ) -> ResumeDecision {
        switch statusCode {
        case 206:
            guard let range = contentRange.flatMap(ContentRangeValue.init) else {
                return .refuse("the server answered 206 without a usable Content-Range")
            }
            guard range.first == existingBytes else {
                return .refuse("the server sent bytes from \(range.first ?? -1), not from \(existingBytes)")
            }
            return .append(offset: existingBytes, total: range.total)
        case 200..<300:
            return .restart(total: contentLength)
        case 416 where existingBytes > 0:
            if let range = contentRange.flatMap(ContentRangeValue.init), let total = range.total, range.first == nil,
                total == existingBytes
            {
                return .alreadyComplete(total: total)
            }
            return .refuse("the server cannot send bytes from \(existingBytes) (416); the file is not a prefix of it")
        default:
            return .refuse("HTTP \(statusCode) \(HeadFormatter.reasonPhrase(for: statusCode))")
        }
    }
}
