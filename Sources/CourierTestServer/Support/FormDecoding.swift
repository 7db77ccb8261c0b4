/// Decoders for the bodies httpbin understands: `application/x-www-form-urlencoded` (also used for
/// query strings) and `multipart/form-data`.
enum FormDecoding {
    /// One part of a `multipart/form-data` body.
    struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var content: [UInt8]
    }

    /// Splits `text` into name-value pairs, in order: `+` is a space, `%XX` is a byte, a pair without
    /// `=` has an empty value, and empty pairs are skipped (as werkzeug does).
    static func urlEncodedPairs(_ text: Substring) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (decodeComponent(pair[..<equals]), decodeComponent(pair[pair.index(after: equals)...]))
            }
            return (decodeComponent(pair), "")
        }
    }

    /// Percent-decodes a form component; malformed escapes are kept as they are.
    static func decodeComponent(_ component: Substring, plusIsSpace: Bool = true) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        var iterator = Array(component.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "+"), plusIsSpace {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let value = hexByte(iterator[iterator.startIndex], iterator[iterator.startIndex + 1])
            {
                bytes.append(value)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The byte two hexadecimal digits spell, or `nil` if either is not a hex digit (`UInt8(_:radix:)`
    /// would also accept a sign, turning `%+4` into a byte).
    static func hexByte(_ high: UInt8, _ low: UInt8) -> UInt8? {
        func digit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        guard let high = digit(high), let low = digit(low) else { return nil }
        return high << 4 | low
    }

    /// The value of parameter `name` in a header such as `multipart/form-data; boundary="abc"`.
    ///
    /// Quoted values may hold `;` and backslash escapes.
    static func headerParameter(_ name: String, in header: String) -> String? {
        var pieces: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in header {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes, character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == ";", !inQuotes {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        for piece in pieces.dropFirst() {
            guard let equals = piece.firstIndex(of: "="),
                piece[..<equals].trimmingSpaces().lowercased() == name.lowercased()
            else { continue }
            return String(piece[piece.index(after: equals)...].trimmingSpaces())
        }
        return nil
    }

    /// Splits a `multipart/form-data` body into its parts, or returns `nil` if it is malformed.
    static func multipartParts(_ body: [UInt8], boundary: String) -> [Part]? {
        let delimiter = Array("--\(boundary)".utf8)
        let crlf: [UInt8] = [13, 10]
        guard var cursor = firstIndex(of: delimiter, in: body, from: 0) else { return nil }
        var parts: [Part] = []
        while true {
            cursor += delimiter.count
            if body[cursor...].starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) { return parts }
            guard body[cursor...].starts(with: crlf) else { return nil }
            cursor += 2
            guard let headerEnd = firstIndex(of: crlf + crlf, in: body, from: cursor) else { return nil }
            let headerText = String(decoding: body[cursor..<headerEnd], as: UTF8.self)
            let contentStart = headerEnd + 4
            guard let next = firstIndex(of: crlf + delimiter, in: body, from: contentStart) else { return nil }
            var name: String?
            var filename: String?
            var contentType: String?
            for line in headerText.split(separator: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let field = line[..<colon].trimmingSpaces().lowercased()
                let value = String(line[line.index(after: colon)...].trimmingSpaces())
                if field == "content-disposition" {
                    name = headerParameter("name", in: value)
                    filename = headerParameter("filename", in: value)
                } else if field == "content-type" {
                    contentType = value
                }
            }
            if let name {
                parts.append(
                    Part(
                        name: name,
                        filename: filename,
                        contentType: contentType,
                        content: Array(body[contentStart..<next])
                    )
                )
            }
            cursor = next + 2
        }
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        var position = start
        let first = needle[0]
        while position <= haystack.count - needle.count {
            if haystack[position] == first, haystack[position..<position + needle.count].elementsEqual(needle) {
                return position
            }
            position += 1
        }
        return nil
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return Substring(self[start...end])
    }
}
