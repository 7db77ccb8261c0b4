import Foundation

/// Reads an HTTP date (RFC 9110 §5.6.7) in any of the three forms a recipient must accept:
/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
///
/// Used for `Date`, `Expires` and `Last-Modified`, which arrive with every cacheable response:
/// read byte by byte rather than through `DateFormatter`, which is slow on Linux and has trapped
/// on hostile text. Anything longer than any valid date is refused before it is looked at.
enum HTTPDate {
    /// More than the longest valid date (`Wednesday, 09-Nov-94 08:49:37 GMT` is 33 bytes).
    static let longestDate = 64

    /// The date `text` names, or `nil` when it is not an HTTP date (including impossible
    /// calendar dates such as 31 February).
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count <= longestDate else { return nil }
        let tokens = bytes.split(separator: UInt8(ascii: " ")).map(Array.init)
        switch tokens.count {
        case 6:
            // IMF-fixdate: `Sun,` `06` `Nov` `1994` `08:49:37` `GMT`.
            guard tokens[0].last == UInt8(ascii: ","), isWeekday(tokens[0].dropLast(), long: false),
                tokens[5] == Array("GMT".utf8), tokens[1].count == 2, tokens[3].count == 4,
                let day = number(tokens[1]), let month = month(tokens[2]), let year = number(tokens[3])
            else { return nil }
            return date(year: year, month: month, day: day, time: tokens[4])
        case 4:
            // RFC 850: `Sunday,` `06-Nov-94` `08:49:37` `GMT`.
            let parts = tokens[1].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
            guard tokens[0].last == UInt8(ascii: ","), isWeekday(tokens[0].dropLast(), long: true),
                tokens[3] == Array("GMT".utf8), parts.count == 3, parts[0].count == 2, parts[2].count == 2,
                let day = number(parts[0]), let month = month(parts[1]), let shortYear = number(parts[2])
            else { return nil }
            // Two-digit years: RFC 9110 reads one more than 50 years ahead as the past century;
            // with no clock here, 70-99 are the 1900s (none of those dates is in the future).
            let year = shortYear >= 70 ? 1900 + shortYear : 2000 + shortYear
            return date(year: year, month: month, day: day, time: tokens[2])
        case 5:
            // asctime: `Sun` `Nov` `6` `08:49:37` `1994` (the day is padded with a space).
            guard isWeekday(tokens[0][...], long: false), (1...2).contains(tokens[2].count), tokens[4].count == 4,
                let month = month(tokens[1]), let day = number(tokens[2]), let year = number(tokens[4])
            else { return nil }
            return date(year: year, month: month, day: day, time: tokens[3])
        default:
            return nil
        }
    }

    private static let shortWeekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longWeekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        .map { Array($0.utf8) }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }

    /// Whether `bytes` name a day of the week (case-sensitively, as the grammar has it). Which
    /// day is not checked against the date: a wrong weekday is a server's slip, not a different date.
    private static func isWeekday(_ bytes: ArraySlice<UInt8>, long: Bool) -> Bool {
        (long ? longWeekdays : shortWeekdays).contains { $0[...] == bytes }
    }

    /// The month (1-12) `bytes` name.
    private static func month<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int? {
        months.firstIndex { $0.elementsEqual(bytes) }.map { $0 + 1 }
    }

    /// `bytes` as a decimal number: at most four digits, nothing else.
    private static func number<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 4 else { return nil }
        var result = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            result = result * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return result
    }

    /// The instant of a checked calendar date at `time` (`HH:MM:SS`), GMT.
    private static func date(year: Int, month: Int, day: Int, time: [UInt8]) -> Date? {
        let parts = time.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }),
            let hour = number(parts[0]), let minute = number(parts[1]), let second = number(parts[2]),
            hour < 24, minute < 60, second <= 60, year >= 1, day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        // In 64 bits: with a 32-bit Int, seconds since 1970 overflow in 2038.
        let days = Int64(daysSinceEpoch(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour) * 3_600 + Int64(minute) * 60 + Int64(second)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), to the second, for a `Date`
    /// header the cache adds; `nil` before year 1 or after year 9999, which the form cannot hold.
    static func format(_ date: Date) -> String? {
        let interval = date.timeIntervalSince1970.rounded(.down)
        // Years 1 to 9999: the four digits the form has.
        guard interval >= -62_135_596_800, interval < 253_402_300_800 else { return nil }
        let seconds = Int64(interval)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's `civil_from_days`.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        // 1970-01-01 was a Thursday.
        let weekday = Int(((days % 7) + 11) % 7)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(weekdays[weekday]), \(padded(day, 2)) \(months[Int(month - 1)]) \(padded(year, 4)) "
            + "\(padded(secondOfDay / 3_600, 2)):\(padded(secondOfDay / 60 % 60, 2)):\(padded(secondOfDay % 60, 2)) GMT"
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's
    /// `days_from_civil`), exact for every year a date here can have.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
