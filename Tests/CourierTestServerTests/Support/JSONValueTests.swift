import Testing

@testable import CourierTestServer

@Suite struct JSONValueTests {
    @Test func parsesEveryKindOfValue() {
        let text = #"{"a": [1, -2.5, 1e3, true, false, null], "b": {"c": "d\u00e9\n"}, "e": "\ud83d\ude00"}"#
        #expect(
            JSONValue.parse(text)
                == .object([
                    "a": .array([.int(1), .double(-2.5), .double(1000), .bool(true), .bool(false), .null]),
                    "b": .object(["c": .string("dé\n")]),
                    "e": .string("😀"),
                ])
        )
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "\"\\x\"", "tru", "1 2", "\"\u{01}\"", "\"\\ud83d\""])
    func rejectsMalformedText(_ text: String) {
        #expect(JSONValue.parse(text) == nil)
    }

    @Test func rejectsDeepNestingWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(JSONValue.parse(deep) == nil)
    }

    @Test func prettyPrintsLikeFlask() {
        let value = JSONValue.object(["b": .array([.int(1), .string("é")]), "a": .object([:]), "c": .array([])])
        #expect(
            value.prettyPrinted() == """
                {
                  "a": {},
                  "b": [
                    1,
                    "\\u00e9"
                  ],
                  "c": []
                }

                """
        )
    }

    @Test func compactFormMatchesPythonDumps() {
        let value = JSONValue.object(["a": .array([.int(1), .bool(true)]), "b": .string("😀")])
        #expect(value.compact() == #"{"a": [1, true], "b": "\ud83d\ude00"}"#)
    }

    @Test func roundTrips() {
        let value = JSONValue.object(["x": .array([.double(0.5), .string("\"\\\t"), .null])])
        #expect(JSONValue.parse(value.prettyPrinted()) == value)
        #expect(JSONValue.parse(value.compact()) == value)
    }
}
