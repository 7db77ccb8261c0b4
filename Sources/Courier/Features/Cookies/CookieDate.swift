import Foundation

/// The cookie-date algorithm of RFC 6265 §5.1.1: how a user agent reads a `Set-Cookie`'s
/// `Expires`, which servers write in every format there has been (`Sun, 06 Nov 1994 08:49:37 GMT`,
/// `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`, and worse).
///
/// The algorithm is deliberately lenient: it cuts the text into tokens at delimiters and takes the
/// first token that looks like a time, the first like a day of the month, the first like a month
/// and the first like a year, in any order; anything else is ignored. Two-digit years 70-99 are
/// 19xx and 00-69 are 20xx. A date that does not exist (`Feb 30`) or a field out of range fails.
///
/// Server input: one pass over the bytes, each token examined a bounded number of times, no
/// `DateFormatter` (which is slow on Linux and locale-dependent). The result is always UTC.
enum CookieDate {
    /// The date in `text`, or `nil` if it is not a cookie-date.
    static func parse(_ text: some StringProtocol) -> Date? {
        parse(Array(text.utf8)[...])
    }

    /// The date in `bytes`, or `nil` if they do not hold a cookie-date.
    static func parse(_ bytes: ArraySlice<UInt8>) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?

        var index = bytes.startIndex
        while index < bytes.endIndex {
            while index < bytes.endIndex, isDelimiter(bytes[index]) { index += 1 }
            let start = index
            while index < bytes.endIndex, !isDelimiter(bytes[index]) { index += 1 }
            guard index > start else { break }
            let token = bytes[start..<index]
            // Each production is tried in the RFC's order; a token counts for the first that takes it.
            if time == nil, let parsed = readTime(token) {
                time = parsed
            } else if dayOfMonth == nil, let parsed = readDigits(token, minimum: 1, maximum: 2) {
                dayOfMonth = parsed
            } else if month == nil, let parsed = readMonth(token) {
                month = parsed
            } else if year == nil, let parsed = readDigits(token, minimum: 2, maximum: 4) {
                year = parsed
            }
        }

        guard let time, let dayOfMonth, let month, var year else { return nil }
        if (70...99).contains(year) {
            year += 1900
        } else if (0...69).contains(year) {
            year += 2000
        }
        guard year >= 1601, (1...31).contains(dayOfMonth), time.hour <= 23, time.minute <= 59, time.second <= 59,
            dayOfMonth <= daysIn(month: month, year: year)
        else { return nil }
        // In 64 bits: with a 32-bit Int (watchOS), seconds since 1970 overflow in 2038 and 1901.
        let days = Int64(daysSince1970(year: year, month: month, day: dayOfMonth))
        let seconds = days * 86_400 + Int64(time.hour) * 3_600 + Int64(time.minute) * 60 + Int64(time.second)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    // MARK: - Productions

    /// `hms-time ( non-digit *OCTET )`, where `hms-time = time-field ":" time-field ":" time-field`
    /// and `time-field = 1*2DIGIT`.
    private static func readTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var index = token.startIndex
        var fields: [Int] = []
        fields.reserveCapacity(3)
        for position in 0..<3 {
            let start = index
            var value = 0
            while index < token.endIndex, index - start < 2, let digit = digitValue(token[index]) {
                value = value * 10 + digit
                index += 1
            }
            guard index > start else { return nil }
            fields.append(value)
            if position < 2 {
                guard index < token.endIndex, token[index] == UInt8(ascii: ":") else { return nil }
                index += 1
            }
        }
        // After the third field: the end, or a non-digit and then anything.
        guard index == token.endIndex || digitValue(token[index]) == nil else { return nil }
        return (fields[0], fields[1], fields[2])
    }

    /// `minimum*maximumDIGIT ( non-digit *OCTET )`: the day of the month (1-2 digits) or the year
    /// (2-4 digits).
    private static func readDigits(_ token: ArraySlice<UInt8>, minimum: Int, maximum: Int) -> Int? {
        var index = token.startIndex
        var value = 0
        while index < token.endIndex, index - token.startIndex < maximum, let digit = digitValue(token[index]) {
            value = value * 10 + digit
            index += 1
        }
        let count = index - token.startIndex
        guard count >= minimum, index == token.endIndex || digitValue(token[index]) == nil else { return nil }
        return value
    }

    /// `month = ( "jan" / "feb" / ... / "dec" ) *OCTET`, case-insensitively: 1 to 12.
    private static func readMonth(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let start = token.startIndex
        // Lowercased ASCII letters packed into one number, compared against the twelve names.
        let key = (Int(token[start] | 0x20) << 16) | (Int(token[start + 1] | 0x20) << 8) | Int(token[start + 2] | 0x20)
        return monthKeys.firstIndex(of: key).map { $0 + 1 }
    }

    private static let monthKeys: [Int] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .map { name in
        let bytes = Array(name.utf8)
        return (Int(bytes[0]) << 16) | (Int(bytes[1]) << 8) | Int(bytes[2])
    }

    // MARK: - Calendar

    private static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar (the civil-from-days
    /// inverse: years start in March, so the leap day is the last day of its year).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    // MARK: - Byte classes

    /// `delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: true
        default: false
        }
    }

    private static func digitValue(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }
}
