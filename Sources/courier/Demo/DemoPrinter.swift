/// Writes the demo's steps: a numbered heading, the step's code, then its live result.
struct DemoPrinter {
    /// Where to write, and in which colours.
    let terminal: Terminal

    private var style: TerminalStyle { terminal.outputStyle }

    /// `n. title`, after a blank line.
    func heading(_ number: Int, _ title: String) {
        terminal.output("\n" + style.paint("\(number). \(title)", .emphasis) + "\n")
    }

    /// The code of a step, indented and dimmed.
    func code(_ snippet: String) {
        let lines = snippet.split(separator: "\n", omittingEmptySubsequences: false)
        terminal.output(lines.map { style.paint("    " + $0, .faint) }.joined(separator: "\n") + "\n")
    }

    /// One line of a step's result, marked with an arrow.
    func result(_ line: String) {
        terminal.output(style.paint("  → ", .success) + line + "\n")
    }

    /// A line of text, indented like a result but unmarked.
    func note(_ line: String) {
        terminal.output("    " + line + "\n")
    }
}
