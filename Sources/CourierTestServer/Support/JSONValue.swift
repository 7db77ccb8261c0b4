/// A JSON document, as the test server reads request bodies and writes responses.
///
/// The server writes JSON the way httpbin (Flask) does, sorted keys, two-space indent and
/// `\uXXXX` escapes for non-ASCII, so `curl` output from both servers lines up. Tests use
/// ``parse(_:)-(String)`` to compare answers field by field.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value under `key` when this is an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string payload, or `nil` for any other kind of value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer payload, or `nil` for any other kind of value.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }
}

// MARK: - Writing

extension JSONValue {
    /// Serialises the value as Flask's `jsonify` does: pretty-printed, keys sorted, a final newline.
    func prettyPrinted() -> String {
        var output = ""
        write(to: &output, indent: 0, pretty: true)
        output.append("\n")
        return output
    }

    /// Serialises the value on one line, as Python's `json.dumps` does (`", "` and `": "`).
    func compact() -> String {
        var output = ""
        write(to: &output, indent: 0, pretty: false)
        return output
    }

    private func write(to output: inout String, indent: Int, pretty: Bool) {
        switch self {
        case .null: output.append("null")
        case .bool(let value): output.append(value ? "true" : "false")
        case .int(let value): output.append(String(value))
        case .double(let value): output.append(Self.format(value))
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            writeContainer(
                elements,
                open: "[",
                close: "]",
                to: &output,
                indent: indent,
                pretty: pretty
            ) { element, output, indent in
                element.write(to: &output, indent: indent, pretty: pretty)
            }
        case .object(let members):
            writeContainer(
                members.sorted { $0.key < $1.key },
                open: "{",
                close: "}",
                to: &output,
                indent: indent,
                pretty: pretty
            ) { member, output, indent in
                Self.writeString(member.key, to: &output)
                output.append(": ")
                member.value.write(to: &output, indent: indent, pretty: pretty)
            }
        }
    }

    private func writeContainer<Element>(
        _ elements: [Element],
        open: String,
        close: String,
        to output: inout String,
        indent: Int,
        pretty: Bool,
        writeElement: (Element, inout String, Int) -> Void
    ) {
        guard !elements.isEmpty else {
            output.append(open + close)
            return
        }
        output.append(open)
        for (index, element) in elements.enumerated() {
            if index > 0 { output.append(pretty ? "," : ", ") }
            if pretty {
                output.append("\n")
                output.append(String(repeating: " ", count: indent + 2))
            }
            writeElement(element, &output, indent + 2)
        }
        if pretty {
            output.append("\n")
            output.append(String(repeating: " ", count: indent))
        }
        output.append(close)
    }

    private static func format(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value < 0 ? "-Infinity" : "Infinity") }
        return value.description
    }

    private static func writeString(_ value: String, to output: inout String) {
        output.append("\"")
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output.append("\\\"")
            case "\\": output.append("\\\\")
            case "\n": output.append("\\n")
            case "\r": output.append("\\r")
            case "\t": output.append("\\t")
            case "\u{08}": output.append("\\b")
            case "\u{0C}": output.append("\\f")
            default:
                if scalar.value < 0x20 || scalar.value > 0x7E {
                    // Python's ensure_ascii: UTF-16 code units, so astral characters become pairs.
                    for unit in String(scalar).utf16 {
                        output.append("\\u")
                        let hex = String(unit, radix: 16)
                        output.append(String(repeating: "0", count: 4 - hex.count) + hex)
                    }
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output.append("\"")
    }
}

// MARK: - Reading

extension JSONValue {
    /// Parses a JSON text (RFC 8259, any value at the top level), or returns `nil` when it is not JSON.
    ///
    /// Like Python's `json.loads`, it also accepts `NaN`, `Infinity` and `-Infinity`.
    public static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
        var parser = Parser(bytes: Array(bytes))
        guard let value = parser.parseValue(depth: 0) else { return nil }
        parser.skipWhitespace()
        return parser.isAtEnd ? value : nil
    }

    /// Parses a JSON text held in a string.
    public static func parse(_ text: String) -> JSONValue? {
        parse(Array(text.utf8))
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        static let maximumDepth = 512

        var isAtEnd: Bool { index >= bytes.count }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        mutating func consume(_ literal: String) -> Bool {
            let utf8 = Array(literal.utf8)
            guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
                return false
            }
            index += utf8.count
            return true
        }

        mutating func parseValue(depth: Int) -> JSONValue? {
            guard depth < Self.maximumDepth else { return nil }
            skipWhitespace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return parseObject(depth: depth)
            case UInt8(ascii: "["): return parseArray(depth: depth)
            case UInt8(ascii: "\""): return parseString().map(JSONValue.string)
            case UInt8(ascii: "t"): return consume("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return consume("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return consume("null") ? .null : nil
            case UInt8(ascii: "N"): return consume("NaN") ? .double(.nan) : nil
            case UInt8(ascii: "I"): return consume("Infinity") ? .double(.infinity) : nil
            default: return parseNumber()
            }
        }

        mutating func parseObject(depth: Int) -> JSONValue? {
            index += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if consume("}") { return .object(members) }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = parseString() else {
                    return nil
                }
                skipWhitespace()
                guard consume(":"), let value = parseValue(depth: depth + 1) else { return nil }
                members[key] = value
                skipWhitespace()
                if consume(",") { continue }
                return consume("}") ? .object(members) : nil
            }
        }

        mutating func parseArray(depth: Int) -> JSONValue? {
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if consume("]") { return .array(elements) }
            while true {
                guard let value = parseValue(depth: depth + 1) else { return nil }
                elements.append(value)
                skipWhitespace()
                if consume(",") { continue }
                return consume("]") ? .array(elements) : nil
            }
        }

        mutating func parseNumber() -> JSONValue? {
            let start = index
            if consume("-Infinity") { return .double(-.infinity) }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digitsStart else { return nil }
            if bytes[digitsStart] == UInt8(ascii: "0"), index - digitsStart > 1 { return nil }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                let fractionStart = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    index += 1
                }
                guard index > fractionStart else { return nil }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                let exponentStart = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    index += 1
                }
                guard index > exponentStart else { return nil }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let value = Int(text) { return .int(value) }
            return Double(text).map(JSONValue.double)
        }

        mutating func parseString() -> String? {
            index += 1
            var scalars = String.UnicodeScalarView()
            var pendingHighSurrogate: UInt32?
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    guard pendingHighSurrogate == nil else { return nil }
                    return String(scalars)
                }
                if byte < 0x20 { return nil }
                if byte == UInt8(ascii: "\\") {
                    index += 1
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    if escape == UInt8(ascii: "u") {
                        guard let unit = parseHex4() else { return nil }
                        if let high = pendingHighSurrogate {
                            guard (0xDC00...0xDFFF).contains(unit),
                                let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
                            else { return nil }
                            scalars.append(scalar)
                            pendingHighSurrogate = nil
                        } else if (0xD800...0xDBFF).contains(unit) {
                            pendingHighSurrogate = unit
                        } else if let scalar = Unicode.Scalar(unit) {
                            scalars.append(scalar)
                        } else {
                            return nil
                        }
                        continue
                    }
                    guard pendingHighSurrogate == nil else { return nil }
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    default: return nil
                    }
                    continue
                }
                guard pendingHighSurrogate == nil else { return nil }
                // Copy a run of plain UTF-8 bytes at once, validating it.
                let runStart = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
                    bytes[index] >= 0x20
                {
                    index += 1
                }
                guard let run = String(validating: bytes[runStart..<index], as: UTF8.self) else { return nil }
                scalars.append(contentsOf: run.unicodeScalars)
            }
            return nil
        }

        mutating func parseHex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            let text = String(decoding: bytes[index..<index + 4], as: UTF8.self)
            guard let value = UInt32(text, radix: 16) else { return nil }
            index += 4
            return value
        }
    }
}
