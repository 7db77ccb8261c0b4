import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The checks on how a response says where its body ends, which SwiftNIO's parser makes and
/// libcurl does not: Courier applies them on URLSession too, so a response is refused or taken
/// alike on both transports.
enum ResponseFraming {
    /// Why `response`'s framing headers cannot be trusted, or `nil` when they can (see
    /// ``problem(contentLengths:hasTransferEncoding:)``).
    ///
    /// Two lookups rather than a pass over `allHeaderFields`: on Linux that bridges every field
    /// to `AnyHashable` and `Any` (about 17,000 instructions a response). `HTTPURLResponse` keeps
    /// one entry per name whatever its case (it canonicalises names), so the lookups see what a
    /// pass would. What it keeps is all FoundationNetworking passes on: fields repeated with the
    /// same spelling are joined (and so refused here), but repeats spelled in another case
    /// (`Content-Length` and `content-length`) overwrite one another before Courier sees the
    /// response, one surviving at random. Over URLSession such a pair is not refused.
    static func problem(in response: HTTPURLResponse) -> String? {
        problem(in: response, contentLength: response.value(forHTTPHeaderField: "Content-Length"))
    }

    /// ``problem(in:)`` for a response whose `Content-Length` field the caller looked up already
    /// (`nil`: it has none), which it can then hand on rather than look it up again.
    static func problem(in response: HTTPURLResponse, contentLength: String?) -> String? {
        guard let contentLength else { return nil }
        return problem(
            contentLengths: [contentLength],
            hasTransferEncoding: response.value(forHTTPHeaderField: "Transfer-Encoding") != nil
        )
    }

    /// Why the framing headers among `headers` cannot be trusted, or `nil` when they can. Linear
    /// in the headers.
    static func problem(in headers: [String: String]) -> String? {
        var contentLengths: [String] = []
        var hasTransferEncoding = false
        for (name, value) in headers {
            // ASCII comparison, not `caseInsensitiveCompare`: on Linux, Foundation's Unicode-aware
            // comparison made this check cost half as much as the rest of a request.
            if HTTPHeaders.namesMatch(name, "Content-Length") {
                contentLengths.append(value)
            } else if HTTPHeaders.namesMatch(name, "Transfer-Encoding") {
                hasTransferEncoding = true
            }
        }
        return problem(contentLengths: contentLengths, hasTransferEncoding: hasTransferEncoding)
    }

    /// Why framing with these `Content-Length` field values cannot be trusted, or `nil` when it
    /// can: more than one length (two fields, or one field with a list), one that is not a
    /// number, or `Content-Length` together with `Transfer-Encoding` (a request-smuggling shape,
    /// RFC 9112 §6.3).
    static func problem(contentLengths: [String], hasTransferEncoding: Bool) -> String? {
        guard !contentLengths.isEmpty else { return nil }
        if hasTransferEncoding { return "Content-Length and Transfer-Encoding together" }
        // Fields that were merged arrive as one comma-separated list. SwiftNIO refuses a second
        // Content-Length even when it repeats the first, so Courier does on both transports.
        var count = 0
        for field in contentLengths {
            for item in field.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                // Bytes, not `trimmingCharacters(in:)`: Foundation's costs some 8,000 instructions.
                let digits = item.trimmingHTTPWhitespace
                guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return "a Content-Length that is not a number"
                }
                count += 1
                if count > 1 { return "more than one Content-Length" }
            }
        }
        return nil
    }
}
