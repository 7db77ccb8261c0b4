import Foundation
import Testing

@testable import Courier

@Suite struct HTTPDateTests {
    /// 1994-11-06 08:49:37 GMT, RFC 9110's example.
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test func readsTheThreeForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Self.example)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Self.example)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Self.example)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == Self.example.addingTimeInterval(10 * 86_400))
    }

    @Test func readsDatesAcrossTheCalendar() {
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT") == Date(timeIntervalSince1970: 951_825_600))
        #expect(HTTPDate.parse("Sat, 31 Dec 2039 23:59:59 GMT") == Date(timeIntervalSince1970: 2_208_988_799))
        #expect(HTTPDate.parse("Wednesday, 09-Nov-22 08:49:37 GMT") == HTTPDate.parse("Wed, 09 Nov 2022 08:49:37 GMT"))
    }

    @Test func refusesWhatIsNotADate() {
        for text in [
            "", "0", "-1", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "Foo, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT", "Sun 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 0000 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT",
            String(repeating: "Sun, 06 Nov 1994 08:49:37 GMT", count: 3),
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }
}
