import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Request and response heads as HTTP/1.1 writes them, for `--print H`/`h` and `--verbose`.
struct HeadFormatter: Sendable {
    /// The colours to use.
    let style: TerminalStyle

    /// `GET /path?query HTTP/1.1`, the `Host` line, then the headers in order.
    func requestHead(method: String, url: URL, headers: [(name: String, value: String)]) -> String {
        var target = url.path.isEmpty ? "/" : url.path
        if let components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            if let query = components.percentEncodedQuery { target += "?" + query }
        }
        var host = url.host ?? ""
        if let port = url.port { host += ":\(port)" }
        var lines = [style.paint(method, .emphasis) + " " + target + " HTTP/1.1"]
        lines.append(headerLine(name: "Host", value: host))
        for header in headers where header.name.lowercased() != "host" {
            lines.append(headerLine(name: header.name, value: header.value))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The status line (coloured by class) and the headers, sorted by name: `HTTPURLResponse`
    /// does not keep the order they came in.
    func responseHead(statusCode: Int, protocolName: String?, headers: [(name: String, value: String)]) -> String {
        let version = protocolName == "h2" ? "HTTP/2" : "HTTP/1.1"
        let role: TerminalStyle.Role =
            switch statusCode {
            case 200..<300: .success
            case 300..<400: .redirect
            default: .failure
            }
        var lines = ["\(version) " + style.paint("\(statusCode) \(Self.reasonPhrase(for: statusCode))", role)]
        for header in headers.sorted(by: { $0.name.lowercased() < $1.name.lowercased() }) {
            lines.append(headerLine(name: header.name, value: header.value))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The headers of `response` as name–value pairs.
    static func headers(of response: HTTPURLResponse) -> [(name: String, value: String)] {
        response.allHeaderFields.compactMap { name, value in
            guard let name = name as? String else { return nil }
            return (name, "\(value)")
        }
    }

    private func headerLine(name: String, value: String) -> String {
        style.paint(name, .key) + ": " + value
    }

    /// The standard reason phrase of `statusCode` (RFC 9110), or an empty string.
    static func reasonPhrase(for statusCode: Int) -> String {
        reasonPhrases[statusCode] ?? ""
    }

    private static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 200: "OK", 201: "Created", 202: "Accepted",
        203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request",
        401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
        408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed",
        413: "Content Too Large", 414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable",
        417: "Expectation Failed", 418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Content",
        425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported",
    ]
}
