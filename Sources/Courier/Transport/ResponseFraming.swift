import Foundation

/// The checks on how a response says where its body ends, which SwiftNIO's parser makes and
/// libcurl does not: Courier applies them on URLSession too, so a response is refused or taken
/// alike on both transports.
enum ResponseFraming {
    /// Why the head's framing headers cannot be trusted, or `nil` when they can: more than one
    /// `Content-Length` (two fields, or one field with a list), one that is not a number, or
    /// `Content-Length` together with `Transfer-Encoding` (a request-smuggling shape, RFC 9112
    /// §6.3). Linear in the headers.
    static func problem(in headers: [AnyHashable: Any]) -> String? {
        var contentLengths: [String] = []
        var hasTransferEncoding = false
        for (key, value) in headers {
            // ASCII comparison, not `caseInsensitiveCompare`: on Linux, Foundation's Unicode-aware
            // comparison made this check cost half as much as the rest of a request.
            guard let name = key.base as? String else { continue }
            if HTTPHeaders.namesMatch(name, "Content-Length") {
                guard let value = value as? String else { continue }
                contentLengths.append(value)
            } else if HTTPHeaders.namesMatch(name, "Transfer-Encoding") {
                hasTransferEncoding = true
            }
        }
        guard !contentLengths.isEmpty else { return nil }
        if hasTransferEncoding { return "Content-Length and Transfer-Encoding together" }
        // Fields that were merged arrive as one comma-separated list. SwiftNIO refuses a second
        // Content-Length even when it repeats the first, so Courier does on both transports.
        var count = 0
        for field in contentLengths {
            for item in field.split(separator: ",", omittingEmptySubsequences: false) {
                let item = item.trimmingCharacters(in: .whitespaces)
                guard !item.isEmpty, item.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return "a Content-Length that is not a number"
                }
                count += 1
                if count > 1 { return "more than one Content-Length" }
            }
        }
        return nil
    }
}
