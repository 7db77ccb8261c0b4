/// How a body is shown on a terminal: formatted JSON, text as it is, or a note for binary data,
/// which would garble the terminal.
enum BodyDisplay: Equatable, Sendable {
    /// Formatted JSON.
    case json(String)
    /// Text, shown as it came.
    case text(String)
    /// Bytes that are not text: only their count is shown.
    case binary(byteCount: Int)

    /// How to show `body`, whose `Content-Type` is `contentType`.
    ///
    /// JSON is recognised by its content type (`…json`) or, failing that, by parsing; a body with
    /// a NUL byte or that is not UTF-8 is binary.
    static func classify(_ body: [UInt8], contentType: String?, style: TerminalStyle) -> BodyDisplay {
        let formatter = JSONFormatter(style: style)
        if let contentType, contentType.lowercased().contains("json"), let formatted = formatter.format(body) {
            return .json(formatted)
        }
        guard !body.contains(0), let text = String(validating: body, as: UTF8.self) else {
            return .binary(byteCount: body.count)
        }
        if let first = body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
            let formatted = formatter.format(body)
        {
            return .json(formatted)
        }
        return .text(text)
    }

    /// The text to write, ending with a newline.
    func rendered(style: TerminalStyle) -> String {
        switch self {
        case .json(let text): return text + "\n"
        case .text(let text): return text.hasSuffix("\n") || text.isEmpty ? text : text + "\n"
        case .binary(let count):
            return style.paint("binary data, \(count) bytes, not shown", .faint) + "\n"
        }
    }
}
