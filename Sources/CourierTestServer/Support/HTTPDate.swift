#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// IMF-fixdate (RFC 9110 §5.6.7), for `Date`, `Last-Modified`, `Expires` and `Retry-After`.
///
/// Formatted by hand from `gmtime_r`: `DateFormatter` is neither cheap nor safe to share across
/// event loops.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats seconds since 1970 as `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(secondsSince1970 seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):"
            + "\(twoDigits(parts.tm_sec)) GMT"
    }

    /// The current time, formatted.
    static func now() -> String {
        format(secondsSince1970: Int(time(nil)))
    }

    /// Seconds since 1970 now.
    static func currentSeconds() -> Int {
        Int(time(nil))
    }
}
