import Foundation

// Header values are ASCII tokens around optional whitespace. These byte-level helpers stand in
// for Foundation's `trimmingCharacters(in:)` and `lowercased()`, which are Unicode-aware and, on
// Linux, cost thousands of instructions a call on a request's hot path.

extension Substring.UTF8View {
    /// The bytes without the spaces and horizontal tabs around them (HTTP's optional whitespace).
    var trimmingHTTPWhitespace: Substring.UTF8View {
        let isWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) })
        else { return self[endIndex...] }
        return self[first...last]
    }

    /// The bytes as a string, ASCII letters lowercased.
    var asciiLowercased: String {
        let uppercase = UInt8(ascii: "A")...UInt8(ascii: "Z")
        guard contains(where: { uppercase.contains($0) }) else { return String(Substring(self)) }
        return String(decoding: map { uppercase.contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

extension StringProtocol {
    /// The text without the spaces and horizontal tabs around it.
    var trimmingHTTPWhitespace: Substring {
        Substring(Substring(self).utf8.trimmingHTTPWhitespace)
    }
}
