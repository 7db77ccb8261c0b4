import NIOCore
import NIOHTTP1

/// A request as a route sees it: the head, the decoded query, the matched path parameters and,
/// for buffered routes, the whole body.
struct ServerRequest {
    /// The method, e.g. `GET`.
    let method: HTTPMethod
    /// The request target as sent, e.g. `/get?a=1`.
    let target: String
    /// The percent-encoded path, without the query.
    let path: String
    /// The query string without `?`, or `nil` when the target has none.
    let queryString: Substring?
    /// The decoded query items, in order.
    let query: [(String, String)]
    /// The request headers, as sent.
    let headers: HTTPHeaders
    /// The protocol version of the request.
    let version: HTTPVersion
    /// The peer's IP address.
    let remoteAddress: String
    /// The `host:port` the server listens on, used when the request has no `Host`.
    let serverAuthority: String
    /// `https` when the request came over TLS, else `http`: echoed URLs name the scheme the client used.
    let scheme: String
    /// Path parameters captured by the route pattern, decoded.
    var parameters: [String: String] = [:]
    /// The body; empty until the whole body has arrived.
    var body: [UInt8] = []

    init(head: HTTPRequestHead, remoteAddress: String, serverAuthority: String, scheme: String = "http") {
        method = head.method
        target = head.uri
        headers = head.headers
        version = head.version
        self.remoteAddress = remoteAddress
        self.serverAuthority = serverAuthority
        self.scheme = scheme
        if let questionMark = head.uri.firstIndex(of: "?") {
            path = String(head.uri[..<questionMark])
            let query = head.uri[head.uri.index(after: questionMark)...]
            queryString = query
            self.query = FormDecoding.urlEncodedPairs(query)
        } else {
            path = head.uri
            queryString = nil
            query = []
        }
    }

    /// The first query value named `name`, compared case-insensitively as httpbin does.
    func queryValue(_ name: String) -> String? {
        let lowered = name.lowercased()
        return query.first { $0.0.lowercased() == lowered }?.1
    }

    /// The query value `name` read as a number, or `defaultValue` when absent or not a number.
    func queryNumber(_ name: String, default defaultValue: Double) -> Double {
        queryValue(name).flatMap { Double($0) } ?? defaultValue
    }

    /// The query value `name` read as an integer, or `defaultValue` when absent or not an integer.
    func queryInteger(_ name: String, default defaultValue: Int) -> Int {
        queryValue(name).flatMap { Int($0) } ?? defaultValue
    }

    /// A path parameter parsed as an integer, as Flask's `<int:…>` converter does (digits only).
    func integerParameter(_ name: String) -> Int? {
        guard let text = parameters[name], !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text)
    }

    /// The `Host` header, or the server's own address.
    var authority: String {
        headers.first(name: "host") ?? serverAuthority
    }

    /// The absolute URL of the request, as werkzeug reports it: non-ASCII escapes in the query decoded.
    var url: String {
        var url = "\(scheme)://\(authority)\(path)"
        if let queryString {
            url += "?" + Self.decodingNonASCIIEscapes(queryString)
        }
        return url
    }

    /// The body's media type without parameters, lowercased, e.g. `application/json`.
    var mediaType: String? {
        headers.first(name: "content-type").map {
            String($0.split(separator: ";").first?.trimmingSpaces() ?? "").lowercased()
        }
    }

    /// Whether the connection closes after this response: the client asked for it, or asked to
    /// upgrade the protocol (the server never upgrades, and the decoder reads nothing after such
    /// a request, so the connection could carry no further request anyway).
    var wantsClose: Bool {
        if headers.contains(name: "upgrade") { return true }
        let tokens = headers[canonicalForm: "connection"].map { $0.lowercased() }
        if version.major == 1, version.minor == 0 { return !tokens.contains("keep-alive") }
        return tokens.contains("close")
    }

    /// Decodes `%XX` runs that spell non-ASCII UTF-8, leaving ASCII escapes such as `%20` alone.
    private static func decodingNonASCIIEscapes(_ text: Substring) -> String {
        var output: [UInt8] = []
        var escapedRun: [UInt8] = []
        var rawRun: [UInt8] = []
        func flushRun() {
            if let decoded = String(validating: escapedRun, as: UTF8.self) {
                output.append(contentsOf: decoded.utf8)
            } else {
                output.append(contentsOf: rawRun)
            }
            escapedRun.removeAll()
            rawRun.removeAll()
        }
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let value = FormDecoding.hexByte(bytes[index + 1], bytes[index + 2]),
                value >= 0x80
            {
                escapedRun.append(value)
                rawRun.append(contentsOf: bytes[index...index + 2])
                index += 3
                continue
            }
            if !escapedRun.isEmpty { flushRun() }
            output.append(bytes[index])
            index += 1
        }
        if !escapedRun.isEmpty { flushRun() }
        return String(decoding: output, as: UTF8.self)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
