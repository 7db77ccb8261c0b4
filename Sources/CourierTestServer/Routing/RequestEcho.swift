import Foundation
import NIOHTTP1

/// Describes a request the way httpbin's `get_dict` does, field by field.
enum RequestEcho {
    /// A field of httpbin's request description.
    enum Field: String {
        case url, args, form, data, origin, headers, files, json, method
    }

    /// Headers httpbin hides (they come from its hosting proxies) unless `show_env` is in the query.
    private static let environmentHeaders: Set<String> = [
        "x-varnish", "x-request-start", "x-heroku-queue-depth", "x-real-ip", "x-forwarded-proto",
        "x-forwarded-protocol", "x-forwarded-ssl", "x-heroku-queue-wait-time", "x-forwarded-for",
        "x-heroku-dynos-in-use", "x-forwarded-port", "x-request-id", "via", "total-route-time", "connect-time",
    ]

    /// The JSON object with the given fields, plus `extras`.
    static func describe(
        _ request: ServerRequest,
        _ fields: [Field],
        extras: [String: JSONValue] = [:]
    ) -> JSONValue {
        var object = extras
        let form = formContent(of: request)
        for field in fields {
            switch field {
            case .url: object["url"] = .string(request.url)
            case .args: object["args"] = multiValueObject(request.query)
            case .form: object["form"] = multiValueObject(form?.fields ?? [])
            case .files: object["files"] = filesObject(form?.files ?? [])
            case .data: object["data"] = .string(form == nil ? jsonSafe(request.body) : "")
            case .origin: object["origin"] = .string(origin(of: request))
            case .headers: object["headers"] = headers(of: request)
            case .method: object["method"] = .string(request.method.rawValue)
            case .json:
                object["json"] =
                    form == nil
                    ? String(validating: request.body, as: UTF8.self).flatMap { JSONValue.parse($0) } ?? .null : .null
            }
        }
        return .object(object)
    }

    /// The client's address, or the first hop of `X-Forwarded-For`.
    static func origin(of request: ServerRequest) -> String {
        request.headers.first(name: "x-forwarded-for") ?? request.remoteAddress
    }

    /// The request headers as httpbin shows them: names title-cased, repeats joined with `,`,
    /// names with `_` dropped (gunicorn drops them), proxy headers hidden.
    static func headers(of request: ServerRequest) -> JSONValue {
        let showEnvironment = request.query.contains { $0.0 == "show_env" }
        var result: [String: String] = [:]
        for (name, value) in request.headers {
            guard !name.contains("_") else { continue }
            let lowered = name.lowercased()
            if !showEnvironment, environmentHeaders.contains(lowered) { continue }
            let title = titleCased(lowered)
            result[title] = result[title].map { $0 + "," + value } ?? value
        }
        return .object(result.mapValues(JSONValue.string))
    }

    /// Python's `str.title()` on ASCII: a letter is upper-cased after a non-letter, else lower-cased.
    static func titleCased(_ text: String) -> String {
        var previousIsLetter = false
        return String(
            text.map { character -> Character in
                let isLetter = character.isASCII && character.isLetter
                defer { previousIsLetter = isLetter }
                guard isLetter else { return character }
                return previousIsLetter ? Character(character.lowercased()) : Character(character.uppercased())
            }
        )
    }

    /// A string for JSON: the text itself if it is UTF-8, else a `data:` URL with the bytes in base64.
    static func jsonSafe(_ bytes: [UInt8], contentType: String = "application/octet-stream") -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return "data:\(contentType);base64,\(Data(bytes).base64EncodedString())"
    }

    /// Name-value pairs as a JSON object: one value stays a string, repeats become a list.
    static func multiValueObject(_ pairs: [(String, String)]) -> JSONValue {
        var grouped: [String: [String]] = [:]
        for (name, value) in pairs { grouped[name, default: []].append(value) }
        return .object(grouped.mapValues { $0.count == 1 ? .string($0[0]) : .array($0.map(JSONValue.string)) })
    }

    private static func filesObject(_ files: [FormDecoding.Part]) -> JSONValue {
        var grouped: [String: [JSONValue]] = [:]
        for file in files {
            let value = jsonSafe(file.content, contentType: file.contentType ?? "application/octet-stream")
            grouped[file.name, default: []].append(.string(value))
        }
        return .object(grouped.mapValues { $0.count == 1 ? $0[0] : .array($0) })
    }

    /// Fields and files of a form body, or `nil` when the body is not a form.
    private static func formContent(
        of request: ServerRequest
    ) -> (fields: [(String, String)], files: [FormDecoding.Part])? {
        switch request.mediaType {
        case "application/x-www-form-urlencoded":
            return (FormDecoding.urlEncodedPairs(Substring(decoding: request.body, as: UTF8.self)), [])
        case "multipart/form-data":
            guard let contentType = request.headers.first(name: "content-type"),
                let boundary = FormDecoding.headerParameter("boundary", in: contentType),
                let parts = FormDecoding.multipartParts(request.body, boundary: boundary)
            else { return ([], []) }
            let fields = parts.filter { $0.filename == nil }.map {
                ($0.name, String(decoding: $0.content, as: UTF8.self))
            }
            return (fields, parts.filter { $0.filename != nil })
        default:
            return nil
        }
    }
}
