import Foundation
import NIOHTTP1

/// httpbin's cookie routes: show the request's cookies, set them, delete them.
enum CookieRoutes {
    /// Analytics cookies httpbin hides unless `show_env` is in the query.
    private static let environmentCookies: Set<String> = [
        "_gauges_unique", "_gauges_unique_year", "_gauges_unique_month", "_gauges_unique_day",
        "_gauges_unique_hour", "__utmz", "__utma", "__utmb",
    ]

    static var routes: [Route] {
        [
            Route("/cookies") { request, _ in
                let showEnvironment = request.query.contains { $0.0 == "show_env" }
                var visible: [String: JSONValue] = [:]
                for (name, value) in cookies(of: request)
                where showEnvironment || !environmentCookies.contains(name) {
                    visible[name] = .string(value)
                }
                return .respond(.json(.object(["cookies": .object(visible)])))
            },
            Route("/cookies/set") { request, _ in
                var response = RedirectRoutes.redirect(to: "/cookies")
                for (name, value) in lastValues(request.query) {
                    response.headers.append(("Set-Cookie", "\(name)=\(quoted(value)); Path=/"))
                }
                return .respond(response)
            },
            Route("/cookies/set/:name/:value") { request, _ in
                var response = RedirectRoutes.redirect(to: "/cookies")
                let name = request.parameters["name"] ?? ""
                let value = request.parameters["value"] ?? ""
                response.headers.append(("Set-Cookie", "\(name)=\(quoted(value)); Path=/"))
                return .respond(response)
            },
            Route("/cookies/delete") { request, _ in
                var response = RedirectRoutes.redirect(to: "/cookies")
                for (name, _) in lastValues(request.query) {
                    response.headers.append(
                        ("Set-Cookie", "\(name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/")
                    )
                }
                return .respond(response)
            },
        ]
    }

    /// The cookies of the `Cookie` header(s), in order; a later repeat of a name wins.
    static func cookies(of request: ServerRequest) -> [(String, String)] {
        request.headers[canonicalForm: "cookie"].flatMap { header in
            header.split(separator: ";").compactMap { pair -> (String, String)? in
                let trimmed = pair.trimmingSpaces()
                guard let equals = trimmed.firstIndex(of: "=") else { return nil }
                var value = trimmed[trimmed.index(after: equals)...].trimmingSpaces()
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = value.dropFirst().dropLast()
                }
                return (String(trimmed[..<equals].trimmingSpaces()), String(value))
            }
        }
    }

    /// One value per name, the last given, in first-seen order (Python's `dict(args.items())`).
    private static func lastValues(_ pairs: [(String, String)]) -> [(String, String)] {
        var order: [String] = []
        var values: [String: String] = [:]
        for (name, value) in pairs {
            if values[name] == nil { order.append(name) }
            values[name] = value
        }
        return order.map { ($0, values[$0] ?? "") }
    }

    /// The value as werkzeug writes it: bare when every character is safe, else in quotes with
    /// `"` and `\\` escaped and any byte outside printable ASCII (or `,` and `;`) as `\\ooo` octal,
    /// so no value can break out of its `Set-Cookie` line.
    static func quoted(_ value: String) -> String {
        let bare = "!#$%&'()*+-./:<=>?@[]^_`{|}~"
        let isBare = value.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || bare.unicodeScalars.contains(scalar))
        }
        if isBare { return value }
        var quoted = "\""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): quoted += "\\\""
            case UInt8(ascii: "\\"): quoted += "\\\\"
            case UInt8(ascii: ","), UInt8(ascii: ";"), 0..<0x20, 0x7F...:
                let octal = String(byte, radix: 8)
                quoted += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            default: quoted.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return quoted + "\""
    }
}
