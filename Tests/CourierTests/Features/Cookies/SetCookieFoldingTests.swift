import Foundation
import Testing

@testable import Courier

@Suite struct SetCookieFoldingTests {
    /// Fields joined with commas come apart where a new `name=` starts, not inside `Expires`.
    @Test func splitsWhereACookieStarts() {
        let folded = "a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/, b=2,c=3;Secure , d = 4"
        #expect(
            SetCookie.unfold(folded) == [
                "a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/", "b=2", "c=3;Secure", "d = 4",
            ]
        )
        #expect(SetCookie.unfold("a=1") == ["a=1"])
        #expect(SetCookie.unfold("") == [])
        #expect(SetCookie.unfold(" , ,a=1,, ") == ["a=1"])
        // A comma not followed by `name=` stays in the field.
        #expect(SetCookie.unfold("list=x, y, z; Path=/") == ["list=x, y, z; Path=/"])
    }

    /// Every field it gives parses as it would have alone.
    @Test func eachFieldParsesAsItWouldAlone() throws {
        let fields = SetCookie.unfold("a=1; Max-Age=60, b=2; Expires=Sun, 06 Nov 1994 08:49:37 GMT")
        try #require(fields.count == 2)
        #expect(SetCookie.parse(fields[0])?.maxAge == 60)
        #expect(SetCookie.parse(fields[1])?.expires == Date(timeIntervalSince1970: 784_111_777))
    }

    /// Hostile joins are split in linear time (generous bound: milliseconds expected).
    @Test func splitsHostileInputInLinearTime() async throws {
        let inputs = [
            String(repeating: ",", count: 1_000_000),
            String(repeating: ", ", count: 500_000),
            String(repeating: ",a", count: 500_000),
            "," + String(repeating: " ", count: 1_000_000),
            String(repeating: ",a=", count: 300_000),
        ]
        let (_, elapsed) = try await offThePool {
            for input in inputs { _ = SetCookie.unfold(input) }
        }
        #expect(elapsed < .seconds(20))
    }
}
