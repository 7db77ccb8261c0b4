extension SetCookie {
    /// The `Set-Cookie` field values in `foldedValue`, several fields a platform joined into one
    /// with commas (as `HTTPURLResponse.allHeaderFields` does, on Linux and Darwin alike), split
    /// apart again.
    ///
    /// A comma cannot simply be split at, since `Expires=Wed, 09 Jun 2021 …` holds one. A comma
    /// separates two fields only when what follows it reads `name=` (a token, optional spaces,
    /// then `=`), as a new cookie starts; elsewhere it stays part of the field. A cookie value
    /// that itself holds `, name=` is cut there: the reason to read separate fields wherever the
    /// transport offers them (AsyncHTTPClient's head does).
    ///
    /// Server input: linear in its length; each byte is looked at by the look-ahead after at most
    /// one comma.
    static func unfold(_ foldedValue: String) -> [String] {
        let bytes = Array(foldedValue.utf8)
        var fields: [String] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: ","), startsCookie(bytes, at: index + 1) {
                appendField(bytes[start..<index], to: &fields)
                start = index + 1
            }
            index += 1
        }
        appendField(bytes[start..<bytes.count], to: &fields)
        return fields
    }

    /// Whether `name=` (spaces around the name allowed) starts at `index`.
    private static func startsCookie(_ bytes: [UInt8], at index: Int) -> Bool {
        var position = index
        while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t") {
            position += 1
        }
        let nameStart = position
        while position < bytes.count, HTTPMethod.isTokenCharacter(bytes[position]) { position += 1 }
        guard position > nameStart else { return false }
        while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t") {
            position += 1
        }
        return position < bytes.count && bytes[position] == UInt8(ascii: "=")
    }

    /// Adds the field without the spaces and commas around it (empty list elements, which
    /// RFC 9110 §5.6.1 says to ignore), unless nothing is left.
    private static func appendField(_ field: ArraySlice<UInt8>, to fields: inout [String]) {
        let isSeparator = { (byte: UInt8) in
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: ",")
        }
        guard let first = field.firstIndex(where: { !isSeparator($0) }),
            let last = field.lastIndex(where: { !isSeparator($0) })
        else { return }
        fields.append(String(decoding: field[first...last], as: UTF8.self))
    }
}
