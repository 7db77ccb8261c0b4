import Foundation

/// Reading the file name out of a `Content-Disposition` header (RFC 6266).
enum ContentDisposition {
    /// The `filename*` (RFC 5987, UTF-8 or ISO-8859-1) or `filename` parameter, undecorated.
    static func fileName(in header: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in parameters(of: header) {
            switch parameter.name {
            case "filename*": extended = decodeExtendedValue(parameter.value)
            case "filename": plain = parameter.value
            default: break
            }
        }
        return extended ?? plain
    }

    /// The `name=value` parameters after the disposition type, quotes and escapes removed.
    private static func parameters(of header: String) -> [(name: String, value: String)] {
        var result: [(String, String)] = []
        var index = header.startIndex
        // Skip the disposition type.
        guard let firstSemicolon = header.firstIndex(of: ";") else { return [] }
        index = header.index(after: firstSemicolon)
        while index < header.endIndex {
            guard let equals = header[index...].firstIndex(of: "=") else { break }
            let name = header[index..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var cursor = header.index(after: equals)
            while cursor < header.endIndex, header[cursor] == " " { cursor = header.index(after: cursor) }
            var value = ""
            if cursor < header.endIndex, header[cursor] == "\"" {
                cursor = header.index(after: cursor)
                while cursor < header.endIndex, header[cursor] != "\"" {
                    if header[cursor] == "\\" {
                        cursor = header.index(after: cursor)
                        guard cursor < header.endIndex else { break }
                    }
                    value.append(header[cursor])
                    cursor = header.index(after: cursor)
                }
                if cursor < header.endIndex { cursor = header.index(after: cursor) }
                if let semicolon = header[cursor...].firstIndex(of: ";") {
                    cursor = header.index(after: semicolon)
                } else {
                    cursor = header.endIndex
                }
            } else {
                let end = header[cursor...].firstIndex(of: ";") ?? header.endIndex
                value = header[cursor..<end].trimmingCharacters(in: .whitespaces)
                cursor = end < header.endIndex ? header.index(after: end) : end
            }
            result.append((name, value))
            index = cursor
        }
        return result
    }

    /// `charset'language'percent-encoded` as text.
    private static func decodeExtendedValue(_ value: String) -> String? {
        let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return nil }
        let charset = pieces[0].lowercased()
        let encoded = String(pieces[2])
        if charset == "utf-8" { return encoded.removingPercentEncoding }
        guard charset == "iso-8859-1" else { return nil }
        var bytes: [UInt8] = []
        var iterator = encoded.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(bytes: bytes, encoding: .isoLatin1)
    }
}
