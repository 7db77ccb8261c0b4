/// ANSI colours for output meant for a person, or none at all: a plain value passed to every
/// formatter, so what is coloured is decided once (a terminal, and `NO_COLOR` unset).
struct TerminalStyle: Sendable, Equatable {
    /// The colours `courier` uses, each for one kind of text.
    enum Role: String, Sendable {
        /// JSON object keys and header names.
        case key = "\u{1B}[34m"
        /// JSON strings.
        case string = "\u{1B}[32m"
        /// JSON numbers.
        case number = "\u{1B}[36m"
        /// `true`, `false`, `null`.
        case literal = "\u{1B}[35m"
        /// A 2xx status line and success summaries.
        case success = "\u{1B}[1;32m"
        /// A 3xx status line.
        case redirect = "\u{1B}[1;33m"
        /// A 4xx or 5xx status line, and errors.
        case failure = "\u{1B}[1;31m"
        /// Headings and other emphasis.
        case emphasis = "\u{1B}[1m"
        /// Secondary text such as the progress bar's empty part.
        case faint = "\u{1B}[2m"
    }

    /// The sequence that ends a colour.
    static let reset = "\u{1B}[0m"

    /// Whether colours are written.
    let isColored: Bool

    /// No colours: for pipes, files and `NO_COLOR`.
    static let plain = TerminalStyle(isColored: false)
    /// Colours.
    static let colored = TerminalStyle(isColored: true)

    /// The style for a stream: coloured only on a terminal and when `NO_COLOR` is unset (or empty,
    /// as https://no-color.org asks).
    static func forStream(isTerminal: Bool, environment: [String: String]) -> TerminalStyle {
        let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        return isTerminal && !noColor ? .colored : .plain
    }

    /// `text` in the colour of `role`, or unchanged when plain.
    func paint(_ text: String, _ role: Role) -> String {
        isColored && !text.isEmpty ? role.rawValue + text + Self.reset : text
    }
}
