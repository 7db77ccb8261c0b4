import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
enum RetryAfter {
    /// The seconds `head` asks a client to wait, counted from `now`, or `nil` when it asks
    /// nothing readable. A date in the past means no wait. Reads the head, so no
    /// `HTTPURLResponse` is built for it.
    static func delay(in head: ResponseHead, now: Date) -> TimeInterval? {
        guard let value = head.value(forHTTPHeaderField: "Retry-After") else { return nil }
        return delay(from: value, now: now)
    }

    /// The seconds `value` asks a client to wait, counted from `now`.
    static func delay(from value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Digits only; too many of them is still "a very long time", not an error.
            return min(TimeInterval(trimmed) ?? .greatestFiniteMagnitude, .greatestFiniteMagnitude)
        }
        guard let date = date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// An HTTP date in any of the three forms RFC 9110 §5.6.7 requires a recipient to accept.
    static func date(from text: String) -> Date? {
        // All three forms are short printable ASCII. Anything else is refused before it reaches
        // DateFormatter: FoundationNetworking's traps (kills the process) on text where a character
        // spans what it parsed, such as a date followed by a combining mark (U+05B1), and a server
        // chooses this text.
        guard text.utf8.count <= Self.longestDate, text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            return nil
        }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            // A formatter per call: this runs once per retry, and DateFormatter is not safe to share.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// More than the longest HTTP date (`Wednesday, 09-Nov-94 08:49:37 GMT` is 33 bytes).
    private static let longestDate = 64
}
