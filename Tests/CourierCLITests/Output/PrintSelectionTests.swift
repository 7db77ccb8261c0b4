import Testing

@testable import courier

@Suite struct PrintSelectionTests {
    private typealias Flags = PrintSelection.Flags

    @Test func defaultsDependOnTheTerminal() throws {
        #expect(try PrintSelection.resolve(Flags(), stdoutIsTerminal: true).description == "hb")
        #expect(try PrintSelection.resolve(Flags(), stdoutIsTerminal: false).description == "b")
    }

    @Test func explicitChoicesWin() throws {
        #expect(try PrintSelection.resolve(Flags(print: "Hh"), stdoutIsTerminal: false).description == "Hh")
        #expect(try PrintSelection.resolve(Flags(print: "b", verbose: true), stdoutIsTerminal: true).description == "b")
        #expect(try PrintSelection.resolve(Flags(verbose: true), stdoutIsTerminal: false).description == "HBhb")
        #expect(try PrintSelection.resolve(Flags(headers: true), stdoutIsTerminal: true).description == "h")
        #expect(try PrintSelection.resolve(Flags(body: true), stdoutIsTerminal: true).description == "b")
        #expect(try PrintSelection.resolve(Flags(offline: true), stdoutIsTerminal: false).description == "HB")
    }

    @Test func rejectsUnknownLetters() {
        #expect(throws: RequestItemError.self) { try PrintSelection(letters: "hx") }
    }
}
