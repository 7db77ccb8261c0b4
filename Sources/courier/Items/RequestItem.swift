import Foundation

/// One `ITEM` argument of `courier [METHOD] URL [ITEM...]`, in httpie's syntax.
///
/// The separator that comes first in the text decides the kind (the longest one where two start
/// at the same place), so `a=b:c` is a field whose value holds a colon. A backslash makes the next
/// character literal: `a\=b=c` is the field `a=b` with the value `c`.
enum RequestItem: Equatable, Sendable {
    /// `Name:value`, or `Name:` for an empty value.
    case header(name: String, value: String)
    /// `name==value`: a query parameter added to the URL.
    case query(name: String, value: String)
    /// `name=value`: a string field of the JSON or form body.
    case field(name: String, value: String)
    /// `name:=json`: a field whose value is raw JSON (`count:=3`, `tags:='["a"]'`), JSON bodies only.
    case jsonField(name: String, rawJSON: String)
    /// `name@path`: a file part; the body becomes `multipart/form-data`.
    case fileField(name: String, path: String)
    /// `@path`: the file is the whole body.
    case bodyFile(path: String)

    /// The separators, each with the kind it makes; at one position the longest wins.
    private static let separators: [(text: String, make: @Sendable (String, String) -> RequestItem)] = [
        (":=", { .jsonField(name: $0, rawJSON: $1) }),
        ("==", { .query(name: $0, value: $1) }),
        (":", { .header(name: $0, value: $1) }),
        ("=", { .field(name: $0, value: $1) }),
        ("@", { name, path in name.isEmpty ? .bodyFile(path: path) : .fileField(name: name, path: path) }),
    ]

    /// Parses one item.
    ///
    /// - Throws: ``RequestItemError`` when the text has no separator, a name is missing where one
    ///   is needed, a header name is not a token, or a `:=` value is not JSON.
    static func parse(_ text: String) throws(RequestItemError) -> RequestItem {
        let characters = Array(text)
        var name = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "\\", index + 1 < characters.count {
                name.append(characters[index + 1])
                index += 2
                continue
            }
            for separator in separators where matches(separator.text, in: characters, at: index) {
                let value = unescaped(characters[(index + separator.text.count)...])
                return try validated(separator.make(name, value), text: text)
            }
            name.append(character)
            index += 1
        }
        throw RequestItemError(item: text, reason: "it has no separator (one of : == = := @)")
    }

    /// Whether `separator` starts at `index` of `characters`.
    private static func matches(_ separator: String, in characters: [Character], at index: Int) -> Bool {
        let wanted = Array(separator)
        guard index + wanted.count <= characters.count else { return false }
        return Array(characters[index..<(index + wanted.count)]) == wanted
    }

    /// The value with its backslash escapes resolved.
    private static func unescaped(_ characters: ArraySlice<Character>) -> String {
        var value = ""
        var isEscaped = false
        for character in characters {
            if !isEscaped, character == "\\" {
                isEscaped = true
                continue
            }
            value.append(character)
            isEscaped = false
        }
        return value
    }

    /// `item`, or an error saying why it cannot be sent.
    private static func validated(_ item: RequestItem, text: String) throws(RequestItemError) -> RequestItem {
        switch item {
        case .header(let name, _):
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(isTokenCharacter) else {
                throw RequestItemError(item: text, reason: "\"\(name)\" is not a valid header name")
            }
        case .query(let name, _), .field(let name, _), .fileField(let name, _):
            guard !name.isEmpty else { throw RequestItemError(item: text, reason: "the name is empty") }
        case .jsonField(let name, let rawJSON):
            guard !name.isEmpty else { throw RequestItemError(item: text, reason: "the name is empty") }
            guard (try? JSONSerialization.jsonObject(with: Data(rawJSON.utf8), options: .fragmentsAllowed)) != nil
            else {
                throw RequestItemError(item: text, reason: "the value after := is not valid JSON")
            }
        case .bodyFile(let path):
            guard !path.isEmpty else { throw RequestItemError(item: text, reason: "the file path is empty") }
        }
        return item
    }

    /// Whether `scalar` may appear in an HTTP token (RFC 9110, section 5.6.2).
    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return false }
        if CharacterSet.alphanumerics.contains(scalar) { return true }
        return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
    }
}
