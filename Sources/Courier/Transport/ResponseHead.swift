import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response's status line and headers, readable without building an `HTTPURLResponse`.
///
/// On Linux, FoundationNetworking spends about 150,000 instructions making one `HTTPURLResponse`
/// (it canonicalises every header name with Unicode-aware string functions): more than
/// AsyncHTTPClient spends on a whole request. A transport that does not get one for free reports
/// the head as its parts, and a ``DataRequest`` builds the `HTTPURLResponse` only if something
/// asks for it (``Request/response``, a custom validator or serializer, an event monitor).
/// Validation and Courier's own serializers read the head directly. Read ``DataResponse/head``
/// rather than ``DataResponse/response`` where the status or a header is all you need. (Downloads
/// and streams build it at once: one per transfer costs nothing that matters.)
///
/// ``mimeType`` and ``textEncodingName`` are read from `Content-Type` the same way whichever
/// transport answered, following RFC 9110 (parameter names are case-insensitive).
///
/// `@unchecked Sendable`: the one mutable member, the built response, sits behind one lock; the
/// rest is immutable.
public final class ResponseHead: @unchecked Sendable {
    /// The URL the response came from (after redirects).
    public let url: URL?
    /// The HTTP status code.
    public let statusCode: Int
    /// The header fields as received, in order, with duplicates; empty when wrapping an
    /// `HTTPURLResponse`, whose own fields are read instead.
    private let fields: [(name: String, value: String)]
    private let httpVersion: String?
    /// Whether the head wraps an `HTTPURLResponse` given to it, whose fields it reads.
    private let wrapsResponse: Bool
    /// The `HTTPURLResponse`: given, or built on first use.
    private let built: Protected<HTTPURLResponse??>

    /// A head read from a response a transport already has, such as URLSession's.
    public init(_ response: HTTPURLResponse) {
        url = response.url
        statusCode = response.statusCode
        fields = []
        httpVersion = nil
        wrapsResponse = true
        built = Protected(.some(response))
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
        wrapsResponse = false
        built = Protected(.none)
    }

    /// The value of the header `name` (case-insensitive); several fields of that name are joined
    /// with `", "`, as HTTP allows.
    public func value(forHTTPHeaderField name: String) -> String? {
        if wrapsResponse { return httpURLResponse?.value(forHTTPHeaderField: name) }
        var joined: String?
        for field in fields where Self.namesMatch(field.name, name) {
            joined = joined.map { "\($0), \(field.value)" } ?? field.value
        }
        return joined
    }

    /// The headers, in order; several fields of one name are joined into one.
    public var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if wrapsResponse {
            for case let (name as String, value as String) in httpURLResponse?.allHeaderFields ?? [:] {
                headers.update(name: name, value: value)
            }
        } else {
            for field in fields {
                headers.update(name: field.name, value: value(forHTTPHeaderField: field.name) ?? field.value)
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
        // Digits only: `Int64(_:)` alone would take a sign, and report `-5` as the length.
        guard let length = value(forHTTPHeaderField: "Content-Length")?.trimmingHTTPWhitespace,
            !length.isEmpty, length.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return -1 }
        return Int64(length) ?? -1
    }

    /// The head as an `HTTPURLResponse`, built on first use and kept; `nil` if Foundation refuses
    /// the parts.
    public var httpURLResponse: HTTPURLResponse? {
        if let response = built.withLock({ $0 }) { return response }
        // One entry per name, compared case-insensitively (Foundation would keep one of
        // `Vary` and `vary`), repeated fields joined.
        var merged: [String: String] = [:]
        merged.reserveCapacity(fields.count)
        var namesByLowercase: [String: String] = [:]
        for field in fields {
            let key = field.name.lowercased()
            let name = namesByLowercase[key] ?? field.name
            namesByLowercase[key] = name
            merged[name] = merged[name].map { "\($0), \(field.value)" } ?? field.value
        }
        // Built outside the lock (it is slow); if two threads race, the first one stored wins.
        let response = url.flatMap {
            HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: httpVersion, headerFields: merged)
        }
        return built.withLock { stored in
            if let existing = stored { return existing }
            stored = .some(response)
            return response
        }
    }

    /// ASCII case-insensitive equality, the rule for header names, without allocating.
    private static func namesMatch(_ left: String, _ right: String) -> Bool {
        guard left.utf8.count == right.utf8.count else { return false }
        var leftBytes = left.utf8.makeIterator()
        var rightBytes = right.utf8.makeIterator()
        while true {
            switch (leftBytes.next(), rightBytes.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                if a != b, a | 0x20 != b | 0x20 || !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(a | 0x20) {
                    return false
                }
            default: return false
            }
        }
    }
}
