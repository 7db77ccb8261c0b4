/// Which parts of the exchange `courier` prints: httpie's `--print` letters `H` (request headers),
/// `B` (request body), `h` (response headers), `b` (response body).
struct PrintSelection: OptionSet, Sendable, CustomStringConvertible {
    let rawValue: Int

    /// `H`: the request's head.
    static let requestHeaders = PrintSelection(rawValue: 1 << 0)
    /// `B`: the request's body.
    static let requestBody = PrintSelection(rawValue: 1 << 1)
    /// `h`: the response's head.
    static let responseHeaders = PrintSelection(rawValue: 1 << 2)
    /// `b`: the response's body.
    static let responseBody = PrintSelection(rawValue: 1 << 3)

    /// The options that choose what to print, as given on the command line.
    struct Flags: Sendable {
        /// `--print`/`-p`, as typed.
        var print: String?
        /// `--verbose`/`-v`.
        var verbose = false
        /// `--headers`/`-h`.
        var headers = false
        /// `--body`/`-b`.
        var body = false
        /// `--offline`.
        var offline = false
    }

    /// The selection `letters` spells, e.g. `"hb"`.
    ///
    /// - Throws: ``RequestItemError`` for a letter other than `H`, `B`, `h`, `b`.
    init(letters: String) throws(RequestItemError) {
        var selection: PrintSelection = []
        for letter in letters {
            switch letter {
            case "H": selection.insert(.requestHeaders)
            case "B": selection.insert(.requestBody)
            case "h": selection.insert(.responseHeaders)
            case "b": selection.insert(.responseBody)
            default:
                throw RequestItemError(
                    item: letters,
                    reason: "--print takes the letters H, B, h and b, not '\(letter)'"
                )
            }
        }
        self = selection
    }

    init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// What to print: `--print` wins, then `--headers`/`--body`, then `--verbose`; otherwise the
    /// response head and body on a terminal, only the body when stdout is redirected (so
    /// `courier URL > file` is exact), and the request for `--offline`.
    static func resolve(_ flags: Flags, stdoutIsTerminal: Bool) throws(RequestItemError) -> PrintSelection {
        if let letters = flags.print { return try PrintSelection(letters: letters) }
        if flags.headers || flags.body {
            var selection: PrintSelection = []
            if flags.headers { selection.insert(.responseHeaders) }
            if flags.body { selection.insert(.responseBody) }
            if flags.verbose { selection.formUnion([.requestHeaders, .requestBody]) }
            return selection
        }
        if flags.verbose { return [.requestHeaders, .requestBody, .responseHeaders, .responseBody] }
        if flags.offline { return [.requestHeaders, .requestBody] }
        return stdoutIsTerminal ? [.responseHeaders, .responseBody] : [.responseBody]
    }

    var description: String {
        var letters = ""
        if contains(.requestHeaders) { letters += "H" }
        if contains(.requestBody) { letters += "B" }
        if contains(.responseHeaders) { letters += "h" }
        if contains(.responseBody) { letters += "b" }
        return letters
    }
}
