import Foundation

/// A `Content-Range: bytes first-last/complete` header's numbers.
struct ContentRange: Equatable {
    let start: Int64
    let completeLength: Int64?

    init(start: Int64, completeLength: Int64?) {
        self.start = start
        self.completeLength = completeLength
    }

    /// The range RFC 9110 §14.4 allows: digits only (no sign), `first <= last`, and `last` below
    /// the complete length when it is given. Anything else is `nil`, so a resumed download never
    /// trusts a negative length or a range outside the file.
    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last
        else { return nil }
        var completeLength: Int64?
        if halves[1] != "*" {
            guard let complete = Self.number(halves[1]), last < complete else { return nil }
            completeLength = complete
        }
        self.start = first
        self.completeLength = completeLength
    }

    /// A non-negative decimal number of digits only; `Int64(_:)` alone would take a sign.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}
