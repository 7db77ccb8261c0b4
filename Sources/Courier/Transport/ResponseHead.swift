import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response's status line and headers, readable without building an `HTTPURLResponse`.
///
/// On Linux, FoundationNetworking spends about 150,000 instructions making one `HTTPURLResponse`
/// (it canonicalises every header name with Unicode-aware string functions): more than
/// AsyncHTTPClient spends on a whole request. A transport that does not get one for free reports
/// the head as its parts, and a request builds the `HTTPURLResponse` only if something asks for
/// it (``Request/response``, a custom validator or serializer, a download's destination, an event
/// monitor that implements only the `HTTPURLResponse` form of its response event).
/// Validation, retry policies, event monitors that implement the head form, and Courier's own
/// serializers read the head directly, for data, download and stream requests alike. Read
/// ``DataResponse/head`` (``DownloadResponse/head``, ``DataStreamRequest/Completion/head``) rather
/// than `response` where the status or a header is all you need.
///
/// ``mimeType`` and ``textEncodingName`` are read from `Content-Type` the same way whichever
/// transport answered, following RFC 9110 (parameter names are case-insensitive).
public final class ResponseHead: Sendable {
    /// The URL the response came from (after redirects).
    public let url: URL?
    /// The HTTP status code.
    public let statusCode: Int
    /// The header fields as received, in order, with duplicates; empty when wrapping an
    /// `HTTPURLResponse`, whose own fields are read instead.
    private let fields: [(name: String, value: String)]
    private let httpVersion: String?
    /// The `HTTPURLResponse` the head wraps, when one was given to it: its fields are read
    /// instead of ``fields``.
    private let given: HTTPURLResponse?
    /// The fields grouped by name, made with the head when there are more than
    /// ``fieldsScannedDirectly``: reading a header of a large head then costs one lookup, not a
    /// pass over every field. (Courier reads `Content-Length` of every head, so it would be made
    /// anyway.)
    private let index: FieldIndex?
    /// The `HTTPURLResponse` a head made from parts builds when first read.
    ///
    /// Behind ``builtLock``, which every head shares: it is held only to store or read the
    /// response, never while building it, and a response then costs no lock of its own.
    private let built: Protected<HTTPURLResponse??>

    /// The lock of every head's ``built``.
    private static let builtLock = Lock.make()

    /// Up to this many fields, a lookup scans them (cheaper than building an index); beyond, a
    /// hostile server's ten thousand fields would make reading every header quadratic.
    static let fieldsScannedDirectly = 16

    /// `Content-Length` of a wrapped `HTTPURLResponse`, when the transport read it already;
    /// `nil` to look it up. On Linux each lookup in an `HTTPURLResponse` lowercases every one of
    /// its field names (some 4,000 instructions for a small response).
    private let knownContentLength: ContentLengthField?

    /// A `Content-Length` field's value as read, or its absence.
    private enum ContentLengthField {
        case absent
        case value(String)
    }

    /// A head read from a response a transport already has, such as URLSession's.
    public convenience init(_ response: HTTPURLResponse) {
        self.init(response, knownContentLength: nil)
    }

    /// A head of `response`, whose `Content-Length` the transport already read as
    /// `contentLength` (`nil`: the response has none), so that it is not looked up again.
    convenience init(_ response: HTTPURLResponse, contentLength: String?) {
        self.init(response, knownContentLength: contentLength.map { .value($0) } ?? .absent)
    }

    private init(_ response: HTTPURLResponse, knownContentLength: ContentLengthField?) {
        url = response.url
        statusCode = response.statusCode
        fields = []
        httpVersion = nil
        given = response
        index = nil
        built = Protected(nil, lock: Self.builtLock)
        self.knownContentLength = knownContentLength
    }

    /// A head from its parts; the `HTTPURLResponse` is built only when asked for.
    ///
    /// - Parameters:
    ///   - url: The URL the response came from.
    ///   - statusCode: The status code.
    ///   - httpVersion: The version as `HTTPURLResponse` gives it, such as `HTTP/1.1`.
    ///   - headerFields: The fields in the order received; a name may repeat.
    public init(url: URL, statusCode: Int, httpVersion: String?, headerFields: [(name: String, value: String)]) {
        self.url = url
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        fields = headerFields
        given = nil
        index = headerFields.count > Self.fieldsScannedDirectly ? FieldIndex(headerFields) : nil
        built = Protected(nil, lock: Self.builtLock)
        knownContentLength = nil
    }

    /// The value of the header `name` (case-insensitive); several fields of that name are joined
    /// with `", "`, as HTTP allows.
    public func value(forHTTPHeaderField name: String) -> String? {
        if let given { return given.value(forHTTPHeaderField: name) }
        guard let index else {
            // Most names appear once: no array is made unless one repeats.
            var found: String?
            var more: [String] = []
            for field in fields where HTTPHeaders.namesMatch(field.name, name) {
                if found == nil { found = field.value } else { more.append(field.value) }
            }
            guard let found, !more.isEmpty else { return found }
            return ([found] + more).joined(separator: ", ")
        }
        return index.joinedValue(forKey: HTTPHeaders.key(for: name), in: fields)
    }

    /// The values of every field named `name` (case-insensitive), one per field as received;
    /// from an `HTTPURLResponse`, which joins them, the joined value. For fields that must be
    /// read one at a time, such as challenges, where a malformed one must not run into the next.
    func values(forHTTPHeaderField name: String) -> [String] {
        if let given { return given.value(forHTTPHeaderField: name).map { [$0] } ?? [] }
        return fields.compactMap { HTTPHeaders.namesMatch($0.name, name) ? $0.value : nil }
    }

    /// The `Set-Cookie` fields, one per cookie: as received when the head was read from its
    /// parts; split again where an `HTTPURLResponse` joined them (``SetCookie/unfold(_:)``,
    /// which never splits inside an `Expires` date). Linear in the number of fields.
    var setCookieFields: [String] {
        if let given {
            return given.value(forHTTPHeaderField: "Set-Cookie").map(SetCookie.unfold) ?? []
        }
        return values(forHTTPHeaderField: "Set-Cookie")
    }

    /// The headers, in order; several fields of one name are joined into one, placed where the
    /// first of them stood. Linear in the number of fields, however many share a name.
    public var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if let given {
            let fields = given.allHeaderFields
            headers.reserveCapacity(fields.count)
            for case let (name as String, value as String) in fields {
                headers.update(name: name, value: value)
            }
        } else {
            let index = index ?? FieldIndex(fields)
            headers.reserveCapacity(index.order.count)
            for key in index.order {
                // Named as the last of its fields is, as updating one field after another did.
                guard let last = index.positions[key]?.last, let value = index.joinedValue(forKey: key, in: fields)
                else { continue }
                headers.update(name: fields[last].name, value: value)
            }
        }
        return headers
    }

    /// The media type of `Content-Type`, lowercased, without parameters (`application/json`).
    public var mimeType: String? {
        guard let contentType = value(forHTTPHeaderField: "Content-Type") else { return nil }
        let essence = Substring(contentType).utf8.prefix { $0 != UInt8(ascii: ";") }.trimmingHTTPWhitespace
        return essence.isEmpty ? nil : essence.asciiLowercased
    }

    /// The `charset` parameter of `Content-Type`, lowercased and unquoted (`utf-8`).
    public var textEncodingName: String? {
        guard let contentType = value(forHTTPHeaderField: "Content-Type") else { return nil }
        for parameter in Substring(contentType).utf8.split(separator: UInt8(ascii: ";")).dropFirst() {
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")),
                parameter[..<equals].trimmingHTTPWhitespace.asciiLowercased == "charset"
            else { continue }
            var value = parameter[parameter.index(after: equals)...].trimmingHTTPWhitespace
            if value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\""), value.count >= 2 {
                value = value.dropFirst().dropLast()
            }
            return value.isEmpty ? nil : value.asciiLowercased
        }
        return nil
    }

    /// `Content-Length`, or `-1` when the server did not say (or said something that is not a length).
    public var expectedContentLength: Int64 {
        let field: String?
        switch knownContentLength {
        case .absent: field = nil
        case .value(let value): field = value
        case nil: field = value(forHTTPHeaderField: "Content-Length")
        }
        // Digits only: `Int64(_:)` alone would take a sign, and report `-5` as the length.
        guard let length = field?.trimmingHTTPWhitespace,
            !length.isEmpty, length.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return -1 }
        return Int64(length) ?? -1
    }

    /// The head as an `HTTPURLResponse`, built on first use and kept; `nil` if Foundation refuses
    /// the parts.
    public var httpURLResponse: HTTPURLResponse? {
        if let given { return given }
        if let response = built.withLock({ $0 }) { return response }
        // One entry per name, compared case-insensitively (Foundation would keep one of
        // `Vary` and `vary`), repeated fields joined.
        var merged: [String: String] = [:]
        let index = index ?? FieldIndex(fields)
        merged.reserveCapacity(index.order.count)
        for key in index.order {
            guard let first = index.positions[key]?.first, let value = index.joinedValue(forKey: key, in: fields)
            else { continue }
            merged[fields[first].name] = value
        }
        // Built outside the lock (it is slow); if two threads race, the first one stored wins.
        let response = url.flatMap {
            HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: httpVersion, headerFields: merged)
        }
        return built.withLock { built in
            if let existing = built { return existing }
            built = .some(response)
            return response
        }
    }

    /// Whether the `HTTPURLResponse` exists yet (given, or built by a read of
    /// ``httpURLResponse``): lets tests check that nothing built one nobody asked for.
    var hasHTTPURLResponse: Bool { given != nil || built.withLock { $0 != nil } }
}

/// The fields of a head grouped by name (ASCII letters lowercased), in the order each name first
/// appeared: built in one pass, so reading every header of a head is linear in its size.
private struct FieldIndex: Sendable {
    /// The positions of each name's fields, in order.
    let positions: [String: [Int]]
    /// The names, keyed, in the order of their first field.
    let order: [String]

    init(_ fields: [(name: String, value: String)]) {
        var positions: [String: [Int]] = [:]
        positions.reserveCapacity(fields.count)
        var order: [String] = []
        for (offset, field) in fields.enumerated() {
            let key = HTTPHeaders.key(for: field.name)
            if positions[key, default: []].isEmpty { order.append(key) }
            positions[key, default: []].append(offset)
        }
        self.positions = positions
        self.order = order
    }

    /// The values of the fields named `key`, joined with `", "`; `nil` when there are none.
    /// Joined in one pass, sized up front, so ten thousand `Set-Cookie` fields are copied once.
    func joinedValue(forKey key: String, in fields: [(name: String, value: String)]) -> String? {
        guard let positions = positions[key], let first = positions.first else { return nil }
        if positions.count == 1 { return fields[first].value }
        return positions.lazy.map { fields[$0].value }.joined(separator: ", ")
    }
}
