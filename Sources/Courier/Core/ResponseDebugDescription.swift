import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The multi-line description Alamofire's responses print for `debugDescription`: the request,
/// the response, the durations and the result. Credentials stay out: header values that carry
/// them are redacted (as ``HTTPHeaders`` describes them) and user info leaves the URL. Bodies and
/// values are cut at ``limit`` characters, so a large download never lands in a log whole.
enum ResponseDebugDescription {
    /// The most characters of a body or a value the description shows.
    static let limit = 2_048

    static func make(
        request: URLRequest?,
        head: ResponseHead?,
        body: String,
        metrics: RequestMetrics?,
        serializationDuration: TimeInterval,
        result: String
    ) -> String {
        var lines: [String] = []
        if let request {
            let method = request.httpMethod ?? "GET"
            let url = request.url.map { URLRedaction.removingUserInfo(from: $0.absoluteString) } ?? "no URL"
            lines.append("[Request]: \(method) \(url)")
            lines.append(contentsOf: section("[Headers]", headers(request.allHTTPHeaderFields ?? [:])))
            lines.append(contentsOf: section("[Body]", request.httpBody.map(text(of:)) ?? ""))
        } else {
            lines.append("[Request]: None")
        }
        if let head {
            lines.append("[Response]:")
            lines.append("    [Status Code]: \(head.statusCode)")
            lines.append(contentsOf: section("[Headers]", head.headers.description))
            lines.append(contentsOf: section("[Body]", body))
        } else {
            lines.append("[Response]: None")
        }
        lines.append("[Network Duration]: " + (metrics.map { "\($0.duration)s" } ?? "None"))
        lines.append("[Serialization Duration]: \(serializationDuration)s")
        lines.append("[Result]: \(cut(result))")
        return lines.joined(separator: "\n")
    }

    /// A request's headers sorted by name (a dictionary has no order), credentials redacted.
    private static func headers(_ fields: [String: String]) -> String {
        HTTPHeaders(fields).sorted { $0.name < $1.name }.map(\.description).joined(separator: "\n")
    }

    /// `title` and `content` indented under the request or response, `None` when empty.
    private static func section(_ title: String, _ content: String) -> [String] {
        guard !content.isEmpty else { return ["    \(title): None"] }
        return ["    \(title):"]
            + content.split(separator: "\n", omittingEmptySubsequences: false).map { "        \($0)" }
    }

    /// Bytes as UTF-8 text, cut at ``limit``, or their count when they are not text.
    static func text(of data: Data) -> String {
        guard let text = String(data: data.prefix(limit * 4), encoding: .utf8) else { return "\(data.count) bytes" }
        return cut(text, total: data.count)
    }

    /// `text` cut at ``limit`` characters, saying so.
    private static func cut(_ text: String, total: Int? = nil) -> String {
        guard text.count > limit || (total ?? 0) > limit * 4 else { return text }
        return "\(text.prefix(limit))… (\(total.map { "\($0) bytes" } ?? "\(text.count) characters") in all)"
    }
}

extension DataResponse: CustomDebugStringConvertible {
    /// The request, the response (status, headers, body), the durations and the result over
    /// several lines, as Alamofire prints them; credentials redacted, bodies cut at 2,048
    /// characters.
    public var debugDescription: String {
        ResponseDebugDescription.make(
            request: request,
            head: head,
            body: data.map(ResponseDebugDescription.text(of:)) ?? "",
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: "\(result)"
        )
    }
}

extension DownloadResponse: CustomDebugStringConvertible {
    /// The request, the response (status, headers, the file and resume data), the durations and
    /// the result over several lines, as Alamofire prints them; credentials redacted.
    public var debugDescription: String {
        var body = fileURL.map { "File: \($0.path)" } ?? "No file"
        if let resumeData { body += "\nResume Data: \(resumeData.count) bytes" }
        return ResponseDebugDescription.make(
            request: request,
            head: head,
            body: body,
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: "\(result)"
        )
    }
}
