import Testing

@testable import courier

@Suite struct JSONFormatterTests {
    private let plain = JSONFormatter(style: .plain)

    @Test func indentsTwoSpacesAndKeepsKeyOrder() {
        let input = #"{"z":1,"a":[true,null,{"k":"v"}],"m":{},"e":[],"n":-1.5e+3}"#
        let expected = """
            {
              "z": 1,
              "a": [
                true,
                null,
                {
                  "k": "v"
                }
              ],
              "m": {},
              "e": [],
              "n": -1.5e+3
            }
            """
        #expect(plain.format(Array(input.utf8)) == expected)
    }

    @Test func keepsStringsAndNumbersAsWritten() {
        let input = #"  ["caf\u00e9 \"x\"", 1.0, 100000000000000000000000]  "#
        #expect(
            plain.format(Array(input.utf8)) == "[\n  \"caf\\u00e9 \\\"x\\\"\",\n  1.0,\n  100000000000000000000000\n]"
        )
    }

    @Test(arguments: ["", "{", "{\"a\" 1}", "[1,]", "tru", "01x", "{} {}", "\"unterminated", "[1 2]", "-", "1.", "1e"])
    func rejectsWhatIsNotOneValue(input: String) {
        #expect(plain.format(Array(input.utf8)) == nil)
    }

    @Test func rejectsNestingTooDeep() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(plain.format(Array(deep.utf8)) == nil)
    }

    @Test func coloursEachKind() {
        let coloured = JSONFormatter(style: .colored).format(Array(#"{"k":"s","n":2,"b":false}"#.utf8))
        let esc = "\u{1B}["
        #expect(coloured?.contains("\(esc)34m\"k\"\(esc)0m") == true)
        #expect(coloured?.contains("\(esc)32m\"s\"\(esc)0m") == true)
        #expect(coloured?.contains("\(esc)36m2\(esc)0m") == true)
        #expect(coloured?.contains("\(esc)35mfalse\(esc)0m") == true)
    }
}
