import Foundation
import Testing

@testable import Courier

@Suite struct CookieDateTests {
    /// The formats servers really send, all of them the same instant.
    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
        "Sun Nov  6 08:49:37 1994",  // asctime
        "Sun, 06-Nov-1994 08:49:37 GMT",  // Netscape's original
        "1994 Nov 06 08:49:37",  // any order
        "06 november 1994 08:49:37GMT+0100",  // a long month, a zone glued to the time (ignored)
        "  ;;Sun,\t6  NOV 1994 8:49:37  ",  // delimiters anywhere, one-digit fields
    ])
    func readsEveryFormatToTheSameInstant(text: String) {
        #expect(CookieDate.parse(text) == Date(timeIntervalSince1970: 784_111_777))
    }

    /// RFC 6265 §5.1.1, step 3-4: 70-99 are 19xx, 00-69 are 20xx; three and four digits are taken as is.
    @Test func mapsTwoDigitYears() {
        #expect(CookieDate.parse("06 Nov 69 08:49:37") == Date(timeIntervalSince1970: 3_150_953_377))
        #expect(CookieDate.parse("06 Nov 70 08:49:37") == Date(timeIntervalSince1970: 26_729_377))
        #expect(CookieDate.parse("06 Nov 00 08:49:37") == Date(timeIntervalSince1970: 973_500_577))
        #expect(CookieDate.parse("Wed, 09 Jun 21 10:18:14 GMT") == Date(timeIntervalSince1970: 1_623_233_894))
    }

    /// The edges of the ranges the RFC checks, and dates that do not exist.
    @Test func checksRanges() {
        #expect(CookieDate.parse("01 Jan 1601 00:00:00") == Date(timeIntervalSince1970: -11_644_473_600))
        #expect(CookieDate.parse("31 Dec 9999 23:59:59") == Date(timeIntervalSince1970: 253_402_300_799))
        #expect(CookieDate.parse("29 Feb 2000 00:00:00") == Date(timeIntervalSince1970: 951_782_400))
        for text in [
            "31 Dec 1600 23:59:59",  // before 1601
            "06 Nov 994 08:49:37",  // three digits: year 994
            "06 Nov 1994 24:00:00",  // hour
            "06 Nov 1994 08:60:00",  // minute
            "06 Nov 1994 08:49:60",  // second (no leap seconds)
            "32 Nov 1994 08:49:37",  // day
            "00 Nov 1994 08:49:37",  // day zero
            "31 Nov 1994 08:49:37",  // November has 30 days
            "29 Feb 1900 08:49:37",  // not a leap year (divisible by 100)
            "30 Feb 2000 08:49:37",
        ] {
            #expect(CookieDate.parse(text) == nil, "\(text)")
        }
    }

    /// A date without one of its four parts is no date; a token that fits no production is skipped.
    @Test func needsTimeDayMonthAndYear() {
        #expect(CookieDate.parse("Sun, 06 Nov 1994") == nil)
        #expect(CookieDate.parse("Sun, Nov 1994 08:49:37") == nil)
        #expect(CookieDate.parse("Sun, 06 1994 08:49:37") == nil)
        #expect(CookieDate.parse("Sun, 06 Nov 08:49:37") == nil)
        #expect(CookieDate.parse("") == nil)
        #expect(CookieDate.parse("tomorrow") == nil)
        // `123` is no day (two digits at most) but is a year, the first: 123 is out of range.
        #expect(CookieDate.parse("123 06 Nov 1994 08:49:37") == nil)
        // A word before the date is skipped.
        #expect(CookieDate.parse("expires 06 Nov 1994 08:49:37") == Date(timeIntervalSince1970: 784_111_777))
        // A time token with three digits in a field is not a time.
        #expect(CookieDate.parse("06 Nov 1994 08:49:370") == nil)
    }

    /// The first token of each kind wins; later ones are ignored.
    @Test func takesTheFirstOfEachPart() {
        #expect(
            CookieDate.parse("06 Nov 1994 08:49:37 07 Dec 1995 09:00:00") == Date(timeIntervalSince1970: 784_111_777)
        )
    }

    /// Long hostile inputs are read in linear time (generous bound: milliseconds expected).
    @Test func readsHostileInputInLinearTime() async throws {
        let inputs = [
            String(repeating: "1", count: 1_000_000),
            String(repeating: ":", count: 1_000_000),
            String(repeating: "1:", count: 500_000),
            String(repeating: "Nov ", count: 250_000),
            String(repeating: " ,", count: 500_000),
            String(repeating: "12:12:12x", count: 100_000),
        ]
        let (_, elapsed) = try await offThePool {
            for input in inputs { _ = CookieDate.parse(input) }
        }
        #expect(elapsed < .seconds(10))
    }
}
