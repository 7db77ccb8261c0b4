import Foundation

/// The disk store's metadata file format: a small length-prefixed binary record holding an
/// ``HTTPCacheEntry`` and the name of its body file.
///
/// `CCE1`, then big-endian fields: the status code (UInt32), the request and response times
/// (Float64 bits), the body length (UInt64), the key, URL, method and body file name (each a
/// UInt32 length and UTF-8 bytes), the response headers and the selected request headers (each a
/// UInt32 count of name-value pairs). Decoding checks every length against what is left, so a
/// truncated or corrupted file is refused (`nil`), never read past its end; the caller checks the
/// file's size against ``maximumSize`` before reading it at all.
enum HTTPCacheEntryCoding {
    /// The largest metadata file read: far beyond a real response's headers.
    static let maximumSize = 1 << 20
    private static let magic = Array("CCE1".utf8)

    /// `entry` and `bodyFile` as bytes.
    static func encode(_ entry: HTTPCacheEntry, bodyFile: String) -> Data {
        var bytes = magic
        append(UInt32(clamping: entry.statusCode), to: &bytes)
        append(entry.requestTime.timeIntervalSince1970.bitPattern, to: &bytes)
        append(entry.responseTime.timeIntervalSince1970.bitPattern, to: &bytes)
        append(UInt64(clamping: entry.bodyLength), to: &bytes)
        for text in [entry.key, entry.url.absoluteString, entry.method, bodyFile] { append(text, to: &bytes) }
        append(UInt32(clamping: entry.responseHeaders.count), to: &bytes)
        for header in entry.responseHeaders {
            append(header.name, to: &bytes)
            append(header.value, to: &bytes)
        }
        let selected = entry.selectedRequestHeaders.sorted { $0.key < $1.key }
        append(UInt32(clamping: selected.count), to: &bytes)
        for (name, value) in selected {
            append(name, to: &bytes)
            append(value, to: &bytes)
        }
        return Data(bytes)
    }

    /// The entry and body file name in `data`, or `nil` when it is not a whole, valid record.
    static func decode(_ data: Data) -> (entry: HTTPCacheEntry, bodyFile: String)? {
        guard data.count <= maximumSize else { return nil }
        var reader = Reader(bytes: [UInt8](data)[...])
        guard reader.take(magic.count).elementsEqual(magic),
            let status = reader.uint32(), let requestTime = reader.uint64(), let responseTime = reader.uint64(),
            let bodyLength = reader.uint64(), bodyLength <= UInt64(Int64.max),
            let key = reader.string(), let urlText = reader.string(), let url = URL(string: urlText),
            let method = reader.string(), let bodyFile = reader.string(),
            let headerCount = reader.uint32()
        else { return nil }
        var headers = HTTPHeaders()
        for _ in 0..<headerCount {
            // Each pair takes at least 8 bytes: a huge count in a short file ends here, quickly.
            guard let name = reader.string(), let value = reader.string() else { return nil }
            headers.add(name: name, value: value)
        }
        guard let selectedCount = reader.uint32() else { return nil }
        var selected: [String: String] = [:]
        for _ in 0..<selectedCount {
            guard let name = reader.string(), let value = reader.string() else { return nil }
            selected[name] = value
        }
        let requestDate = Date(timeIntervalSince1970: Double(bitPattern: requestTime))
        let responseDate = Date(timeIntervalSince1970: Double(bitPattern: responseTime))
        // `Int(exactly:)`: a damaged record's status must not trap where Int has 32 bits.
        guard reader.isAtEnd, requestDate.timeIntervalSince1970.isFinite, responseDate.timeIntervalSince1970.isFinite,
            let statusCode = Int(exactly: status)
        else { return nil }
        let entry = HTTPCacheEntry(
            key: key,
            url: url,
            method: method,
            statusCode: statusCode,
            responseHeaders: headers,
            selectedRequestHeaders: selected,
            requestTime: requestDate,
            responseTime: responseDate,
            bodyLength: Int64(bodyLength)
        )
        return (entry, bodyFile)
    }

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        append(UInt32(clamping: text.utf8.count), to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    /// Reads fields front to back, each checked against what is left.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func take(_ count: Int) -> ArraySlice<UInt8> {
            let taken = bytes.prefix(count)
            bytes = bytes.dropFirst(taken.count)
            return taken
        }

        mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) -> Integer? {
            let size = MemoryLayout<Integer>.size
            guard bytes.count >= size else { return nil }
            return take(size).reduce(Integer.zero) { $0 << 8 | Integer($1) }
        }

        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }

        mutating func string() -> String? {
            guard let length = uint32().flatMap({ Int(exactly: $0) }), length <= bytes.count else { return nil }
            let text = take(length)
            // Written from Swift strings: anything that is not valid UTF-8 is corruption.
            return String(bytes: text, encoding: .utf8)
        }
    }
}
