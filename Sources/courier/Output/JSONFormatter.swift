/// Pretty-prints JSON for a person: two-space indents, keys in the order the server sent them,
/// strings and numbers exactly as written (escapes kept), optionally coloured.
///
/// It reads the text itself instead of going through `JSONSerialization`, which would reorder keys
/// and rewrite numbers. Input that is not one complete JSON value gives `nil`, and the caller shows
/// the body as it came.
struct JSONFormatter: Sendable {
    /// Nesting deeper than this is shown as it came rather than recursed into.
    static let maximumDepth = 256

    /// The colours to use.
    let style: TerminalStyle

    /// `data` formatted, or `nil` when it is not a single JSON value (surrounding whitespace allowed).
    func format(_ data: some Collection<UInt8>) -> String? {
        var parser = Parser(bytes: Array(data), style: style)
        parser.skipWhitespace()
        guard parser.value(depth: 0) else { return nil }
        parser.skipWhitespace()
        guard parser.isAtEnd else { return nil }
        return parser.output
    }

    /// A recursive-descent reader that writes the formatted text as it goes.
    private struct Parser {
        let bytes: [UInt8]
        let style: TerminalStyle
        var position = 0
        var output = ""

        init(bytes: [UInt8], style: TerminalStyle) {
            self.bytes = bytes
            self.style = style
        }

        var isAtEnd: Bool { position >= bytes.count }

        private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                position += 1
            }
        }

        /// Reads one value at `depth` and writes it; `false` if the text is not JSON there.
        mutating func value(depth: Int) -> Bool {
            guard depth < JSONFormatter.maximumDepth, let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""):
                guard let text = string() else { return false }
                output += style.paint(text, .string)
                return true
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default:
                guard let text = number() else { return false }
                output += style.paint(text, .number)
                return true
            }
        }

        private mutating func object(depth: Int) -> Bool {
            position += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                position += 1
                output += "{}"
                return true
            }
            output += "{\n"
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\""), let key = string() else { return false }
                output += indent(depth + 1) + style.paint(key, .key) + ": "
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { return false }
                position += 1
                skipWhitespace()
                guard value(depth: depth + 1) else { return false }
                if let closed = afterElement(closing: "}", depth: depth) { return closed }
            }
        }

        private mutating func array(depth: Int) -> Bool {
            position += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                position += 1
                output += "[]"
                return true
            }
            output += "[\n"
            while true {
                skipWhitespace()
                output += indent(depth + 1)
                guard value(depth: depth + 1) else { return false }
                if let closed = afterElement(closing: "]", depth: depth) { return closed }
            }
        }

        /// After a member or element: `nil` on a comma (another follows), `true` when `closing`
        /// ends the container, `false` on anything else (not JSON).
        private mutating func afterElement(closing: Unicode.Scalar, depth: Int) -> Bool? {
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                output += ",\n"
                return nil
            case UInt8(ascii: closing):
                position += 1
                output += "\n" + indent(depth) + String(closing)
                return true
            default:
                return false
            }
        }

        /// A string literal exactly as written, quotes included, or `nil` if it is not one.
        private mutating func string() -> String? {
            let start = position
            position += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return String(decoding: bytes[start..<position], as: UTF8.self)
                case UInt8(ascii: "\\"):
                    position += 2
                case 0x00..<0x20:
                    return nil
                default:
                    position += 1
                }
            }
            return nil
        }

        /// A number exactly as written, or `nil` if the text there is not a JSON number.
        private mutating func number() -> String? {
            let start = position
            if current == UInt8(ascii: "-") { position += 1 }
            guard digits() else { return nil }
            if current == UInt8(ascii: ".") {
                position += 1
                guard digits() else { return nil }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                position += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
                guard digits() else { return nil }
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// Skips one or more digits; `false` if there is none.
        private mutating func digits() -> Bool {
            let start = position
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
            return position > start
        }

        private mutating func literal(_ word: String) -> Bool {
            let wanted = Array(word.utf8)
            guard position + wanted.count <= bytes.count, Array(bytes[position..<(position + wanted.count)]) == wanted
            else { return false }
            position += wanted.count
            output += style.paint(word, .literal)
            return true
        }

        private func indent(_ depth: Int) -> String {
            String(repeating: "  ", count: depth)
        }
    }
}
