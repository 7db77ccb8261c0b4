import Testing

@testable import courier

@Suite struct TerminalStyleTests {
    @Test func colourOnlyOnATerminalWithoutNoColor() {
        #expect(TerminalStyle.forStream(isTerminal: true, environment: [:]) == .colored)
        #expect(TerminalStyle.forStream(isTerminal: false, environment: [:]) == .plain)
        #expect(TerminalStyle.forStream(isTerminal: true, environment: ["NO_COLOR": "1"]) == .plain)
        #expect(TerminalStyle.forStream(isTerminal: true, environment: ["NO_COLOR": ""]) == .colored)
    }

    @Test func plainLeavesTextAlone() {
        #expect(TerminalStyle.plain.paint("x", .key) == "x")
        #expect(TerminalStyle.colored.paint("x", .key) == "\u{1B}[34mx\u{1B}[0m")
    }
}
