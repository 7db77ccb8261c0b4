import Courier
import Foundation

/// The request `courier` will send, decided from the arguments alone (no I/O), so the rules
/// (method, URL, headers, body) are tested as plain values and `--offline` can print it.
struct RequestPlan: Equatable, Sendable {
    /// How `name=value` fields are encoded.
    enum BodyFormat: Sendable {
        /// A JSON object (the default).
        case json
        /// `application/x-www-form-urlencoded`.
        case form
    }

    /// What the request carries.
    enum Body: Equatable, Sendable {
        /// Nothing.
        case none
        /// These bytes (a JSON object or an encoded form).
        case data(Data)
        /// The file at this path, read as it is sent.
        case file(path: String)
        /// A `multipart/form-data` form of these parts, in order.
        case multipart([MultipartPart])
    }

    /// How `--auth` answers: `Authorization: Basic` sent with the request, or the server's
    /// Digest challenge answered by Courier (`--auth-type`, as httpie's).
    enum AuthType: String, Equatable, Sendable, CaseIterable {
        case basic
        case digest
    }

    /// A user and password that Courier answers the server's challenge with (`--auth-type digest`).
    struct Credential: Equatable, Sendable {
        let user: String
        let password: String
    }

    /// One part of a multipart form.
    enum MultipartPart: Equatable, Sendable {
        /// A text field.
        case text(name: String, value: String)
        /// A file, named after it, with a type from its extension.
        case file(name: String, path: String)
    }

    /// The methods recognised as the first argument whatever their case; any other word of
    /// capital letters counts as a method too.
    private static let knownMethods: Set<String> = [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT", "QUERY",
    ]

    /// The method, in capitals.
    var method: String
    /// The URL, query items included.
    var url: URL
    /// The headers `courier` sets, in order (the session adds its defaults to those not set here).
    var headers: HTTPHeaders
    /// The body.
    var body: Body
    /// The credential answering a Digest (or Basic) challenge, for `--auth-type digest`; with
    /// Basic the credential is an `Authorization` header in ``headers`` instead.
    var credential: Credential? = nil

    /// The plan for `courier [METHOD] URL [ITEM...]`.
    ///
    /// - Parameters:
    ///   - arguments: The positional arguments: an optional method, the URL, then the items.
    ///   - format: How fields are encoded when no file field asks for multipart.
    ///   - basicCredentials: `user:password` for authentication (`--auth`).
    ///   - authType: How they are sent (`--auth-type`): as `Authorization: Basic`, or in answer to
    ///     the server's Digest challenge.
    ///   - bearerToken: A token for `Authorization: Bearer` (`--bearer`).
    /// - Throws: ``RequestItemError`` for a missing URL, an item that does not parse, or items
    ///   that cannot go together (a body file with fields, raw JSON in a form).
    static func make(
        arguments: [String],
        format: BodyFormat = .json,
        basicCredentials: String? = nil,
        authType: AuthType = .basic,
        bearerToken: String? = nil
    ) throws(RequestItemError) -> RequestPlan {
        var remaining = arguments[...]
        var method: String?
        if remaining.count >= 2, let first = remaining.first, isMethod(first) {
            method = first.uppercased()
            remaining = remaining.dropFirst()
        }
        guard let target = remaining.popFirst() else {
            throw RequestItemError(item: "", reason: "a URL is required")
        }
        var items: [RequestItem] = []
        for text in remaining {
            items.append(try RequestItem.parse(text))
        }

        var query: [(name: String, value: String)] = []
        var userHeaders = HTTPHeaders()
        var fields: [RequestItem] = []
        var bodyFile: String?
        for item in items {
            switch item {
            case .header(let name, let value): userHeaders.add(name: name, value: value)
            case .query(let name, let value): query.append((name, value))
            case .field, .jsonField, .fileField: fields.append(item)
            case .bodyFile(let path):
                guard bodyFile == nil else {
                    throw RequestItemError(item: "@\(path)", reason: "only one @file can be the body")
                }
                bodyFile = path
            }
        }
        if let bodyFile, !fields.isEmpty {
            throw RequestItemError(item: "@\(bodyFile)", reason: "a body file cannot be combined with fields")
        }

        var headers = HTTPHeaders()
        let body: Body
        if let bodyFile {
            body = .file(path: bodyFile)
        } else if fields.contains(where: { if case .fileField = $0 { true } else { false } }) {
            body = .multipart(try multipartParts(fields))
        } else if fields.isEmpty {
            body = .none
        } else if format == .form {
            body = .data(Data(try formBody(fields).utf8))
            headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded; charset=utf-8")
        } else {
            body = .data(Data(jsonBody(fields).utf8))
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Accept", value: "application/json, */*;q=0.5")
        }
        // Credentials in the URL (`http://user:pass@host/`) are --auth's, unless it was given:
        // out of the URL, they are never printed with it.
        let (url, urlCredentials) = RequestTarget.splittingUserInfo(try RequestTarget.url(from: target, query: query))
        var credential: Credential?
        var given = basicCredentials.map(split(credentials:))
        var source = "--auth"
        if given == nil, bearerToken == nil, let (user, password) = urlCredentials {
            given = (user, password)
            source = "the URL's user info"
        }
        if let (user, password) = given {
            switch authType {
            case .basic:
                // As the library refuses them: the server would read another user name and
                // password. The item is named, never the credential.
                if user.utf8.contains(UInt8(ascii: ":")) {
                    throw RequestItemError(item: source, reason: "a Basic user name cannot hold ':'")
                }
                if (user + password).unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    throw RequestItemError(item: source, reason: "a Basic credential cannot hold a control character")
                }
                headers.update(.authorization(username: user, password: password))
            case .digest: credential = Credential(user: user, password: password)
            }
        }
        if let bearerToken {
            headers.update(.authorization(bearerToken: bearerToken))
        }
        for header in userHeaders {
            headers.update(header)
        }
        return RequestPlan(
            method: method ?? (body == .none ? "GET" : "POST"),
            url: url,
            headers: headers,
            body: body,
            credential: credential
        )
    }

    /// Whether the first argument names a method rather than the URL.
    private static func isMethod(_ text: String) -> Bool {
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.isASCII && CharacterSet.letters.contains($0) })
        else { return false }
        return knownMethods.contains(text.uppercased()) || text == text.uppercased()
    }

    /// The user and password of `user:password`; without a colon, the password is empty.
    private static func split(credentials: String) -> (String, String) {
        // At the first byte ':', as the server splits: a ':' with a combining mark after it is
        // one Character that is not ":".
        let bytes = credentials.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return (credentials, "") }
        return (String(Substring(bytes[..<colon])), String(Substring(bytes[bytes.index(after: colon)...])))
    }

    /// The fields as a JSON object, in the order given (raw JSON values inserted as typed).
    private static func jsonBody(_ fields: [RequestItem]) -> String {
        let members = fields.compactMap { field -> String? in
            switch field {
            case .field(let name, let value): return "\(quoted(name)): \(quoted(value))"
            case .jsonField(let name, let rawJSON):
                return "\(quoted(name)): \(rawJSON.trimmingCharacters(in: .whitespacesAndNewlines))"
            default: return nil
            }
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    /// The fields as `application/x-www-form-urlencoded`.
    private static func formBody(_ fields: [RequestItem]) throws(RequestItemError) -> String {
        var pairs: [String] = []
        for field in fields {
            switch field {
            case .field(let name, let value):
                pairs.append(RequestTarget.encoded(name) + "=" + RequestTarget.encoded(value))
            case .jsonField(let name, let rawJSON):
                throw RequestItemError(
                    item: "\(name):=\(rawJSON)",
                    reason: "raw JSON fields need a JSON body, not --form"
                )
            default: continue
            }
        }
        return pairs.joined(separator: "&")
    }

    /// The fields as multipart parts.
    private static func multipartParts(_ fields: [RequestItem]) throws(RequestItemError) -> [MultipartPart] {
        var parts: [MultipartPart] = []
        for field in fields {
            switch field {
            case .field(let name, let value): parts.append(.text(name: name, value: value))
            case .fileField(let name, let path): parts.append(.file(name: name, path: path))
            case .jsonField(let name, let rawJSON):
                throw RequestItemError(
                    item: "\(name):=\(rawJSON)",
                    reason: "raw JSON fields cannot go in a multipart form (a name@file field makes one)"
                )
            default: continue
            }
        }
        return parts
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
