import Foundation

/// A `Content-Range` value: `bytes 100-199/1000`, `bytes 100-199/*` or `bytes */1000`.
struct ContentRangeValue: Equatable, Sendable {
    /// The first byte sent, `nil` for `*` (an unsatisfied range).
    let first: Int64?
    /// The last byte sent, `nil` for `*`.
    let last: Int64?
    /// The whole length, `nil` for `*`.
    let total: Int64?

    /// Parses `text`; `nil` when it is not a bytes range.
    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = trimmed.dropFirst(6).split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = Int64(parts[1]), value >= 0 else { return nil }
            total = value
        }
        if parts[0] == "*" {
            guard total != nil else { return nil }
            first = nil
            last = nil
            return
        }
        let bounds = parts[0].split(separator: "-", maxSplits: 1).map { Int64($0) }
        guard bounds.count == 2, let first = bounds[0], let last = bounds[1], first >= 0, last >= first else {
            return nil
        }
        self.first = first
        self.last = last
    }
}
