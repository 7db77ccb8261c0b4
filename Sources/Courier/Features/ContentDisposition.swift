import Foundation

/// Reading the file name out of a `Content-Disposition` header (RFC 6266), and making it safe to
/// save under.
///
/// Both work on the header's bytes in one pass each, so a hostile server's megabyte of
/// parameters costs a megabyte of steps.
enum ContentDisposition {
    /// The longest file name most file systems take, in bytes of UTF-8.
    static let maximumFileNameBytes = 255

    /// The `filename*` (RFC 5987, UTF-8 or ISO-8859-1) or `filename` parameter, undecorated.
    static func fileName(in header: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in parameters(of: Array(header.utf8)) {
            switch parameter.name {
            case "filename*": extended = decodeExtendedValue(parameter.value)
            case "filename": plain = String(decoding: parameter.value, as: UTF8.self)
            default: break
            }
        }
        return extended ?? plain
    }

    /// `name` as one plain file name, or `nil` if nothing usable is left: control and format
    /// characters removed, then its last path component (either slash), trimmed of whitespace,
    /// then of leading dots (so never hidden, `.` or `..`), and at most ``maximumFileNameBytes``
    /// bytes of UTF-8 cut at a character boundary.
    ///
    /// Works on Unicode scalars, not characters: a slash followed by a joiner or a combining mark
    /// is one character, which a split on characters would not see as a slash.
    static func sanitizedFileName(_ name: String) -> String? {
        // Filter first, split second: removing a zero-width joiner must not reveal a slash.
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars
        where !CharacterSet.controlCharacters.contains(scalar) && scalar.properties.generalCategory != .format {
            scalars.append(scalar)
        }
        var lastComponent = String.UnicodeScalarView()
        for scalar in scalars {
            if scalar == "/" || scalar == "\\" {
                lastComponent = String.UnicodeScalarView()
            } else {
                lastComponent.append(scalar)
            }
        }
        // Whitespace first, then dots: " .bashrc" must not become ".bashrc", nor " .." "..".
        var cleaned = Substring(String(lastComponent)).unicodeScalars[...]
        while let first = cleaned.first, first == "." || first.properties.isWhitespace {
            cleaned = cleaned.dropFirst()
        }
        var result = String(String.UnicodeScalarView(cleaned)).trimmingCharacters(in: .whitespacesAndNewlines)
        if result.utf8.count > maximumFileNameBytes {
            result = truncated(result, toUTF8Bytes: maximumFileNameBytes)
        }
        // Whatever the steps above missed, a name with a separator or NUL, or a leading dot, is no
        // plain name.
        guard !result.isEmpty, result.utf8.first != UInt8(ascii: "."),
            !result.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == 0 })
        else { return nil }
        return result
    }

    /// The longest prefix of `text` of whole characters within `limit` bytes of UTF-8.
    private static func truncated(_ text: String, toUTF8Bytes limit: Int) -> String {
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            let size = text.utf8.distance(from: index, to: next)
            guard bytes + size <= limit else { break }
            bytes += size
            end = next
        }
        return String(text[..<end]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The `name=value` parameters after the disposition type, names lowercased, quotes and
    /// escapes removed. One pass over `bytes`: every step moves forward.
    private static func parameters(of bytes: [UInt8]) -> [(name: String, value: [UInt8])] {
        let semicolon = UInt8(ascii: ";")
        let equals = UInt8(ascii: "=")
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        let isWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        // Skip the disposition type.
        guard var index = bytes.firstIndex(of: semicolon).map({ $0 + 1 }) else { return [] }
        var result: [(String, [UInt8])] = []
        while index < bytes.endIndex {
            // The name runs to `=`; a `;` first means a parameter without a value, skipped.
            var nameEnd = index
            while nameEnd < bytes.endIndex, bytes[nameEnd] != equals, bytes[nameEnd] != semicolon { nameEnd += 1 }
            guard nameEnd < bytes.endIndex else { break }
            if bytes[nameEnd] == semicolon {
                index = nameEnd + 1
                continue
            }
            let name = Substring(decoding: bytes[index..<nameEnd], as: UTF8.self).utf8.trimmingHTTPWhitespace
                .asciiLowercased
            var cursor = nameEnd + 1
            while cursor < bytes.endIndex, isWhitespace(bytes[cursor]) { cursor += 1 }
            var value: [UInt8] = []
            if cursor < bytes.endIndex, bytes[cursor] == quote {
                cursor += 1
                while cursor < bytes.endIndex, bytes[cursor] != quote {
                    if bytes[cursor] == backslash {
                        cursor += 1
                        guard cursor < bytes.endIndex else { break }
                    }
                    value.append(bytes[cursor])
                    cursor += 1
                }
                // Past the closing quote, then whatever stands before the next `;`.
                while cursor < bytes.endIndex, bytes[cursor] != semicolon { cursor += 1 }
            } else {
                let start = cursor
                while cursor < bytes.endIndex, bytes[cursor] != semicolon { cursor += 1 }
                var end = cursor
                while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
                value = Array(bytes[start..<end])
            }
            result.append((name, value))
            index = cursor + 1
        }
        return result
    }

    /// `charset'language'percent-encoded` as text.
    private static func decodeExtendedValue(_ value: [UInt8]) -> String? {
        let apostrophe = UInt8(ascii: "'")
        guard let first = value.firstIndex(of: apostrophe),
            let second = value[(first + 1)...].firstIndex(of: apostrophe)
        else { return nil }
        let charset = Substring(decoding: value[..<first], as: UTF8.self).utf8.asciiLowercased
        guard charset == "utf-8" || charset == "iso-8859-1" else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.count - second)
        var index = second + 1
        while index < value.endIndex {
            let byte = value[index]
            if byte == UInt8(ascii: "%"), index + 2 < value.endIndex,
                let high = hexValue(value[index + 1]), let low = hexValue(value[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        // Not `String(validating:as:)`: it needs macOS 15, and the package supports macOS 13.
        if charset == "utf-8" { return String(bytes: bytes, encoding: .utf8) }
        return String(bytes: bytes, encoding: .isoLatin1)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
