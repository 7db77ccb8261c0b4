import Foundation
import NIOHTTP1

/// httpbin's authentication routes: Basic (announced and hidden) and Bearer.
enum AuthRoutes {
    static var routes: [Route] {
        [
            Route("/basic-auth/:user/:passwd") { request, _ in
                guard let user = request.parameters["user"], let password = request.parameters["passwd"],
                    basicCredentials(of: request).map({ $0 == (user, password) }) == true
                else { return .respond(StatusRoutes.response(forCode: 401)) }
                return .respond(.json(.object(["authenticated": .bool(true), "user": .string(user)])))
            },
            Route("/hidden-basic-auth/:user/:passwd") { request, _ in
                guard let user = request.parameters["user"], let password = request.parameters["passwd"],
                    basicCredentials(of: request).map({ $0 == (user, password) }) == true
                else { return .respond(StatusRoutes.response(forCode: 404)) }
                return .respond(.json(.object(["authenticated": .bool(true), "user": .string(user)])))
            },
            Route("/bearer") { request, _ in
                guard let authorization = request.headers.first(name: "authorization"),
                    authorization.hasPrefix("Bearer ")
                else {
                    return .respond(
                        ServerResponse(
                            status: .unauthorized,
                            headers: [
                                ("Content-Type", "text/html; charset=utf-8"), ("WWW-Authenticate", "Bearer"),
                            ]
                        )
                    )
                }
                let token = String(authorization.dropFirst("Bearer ".count))
                return .respond(.json(.object(["authenticated": .bool(true), "token": .string(token)])))
            },
        ]
    }

    /// The user and password of a `Basic` `Authorization` header, or `nil` if there is none or it is malformed.
    static func basicCredentials(of request: ServerRequest) -> (String, String)? {
        guard let authorization = request.headers.first(name: "authorization") else { return nil }
        let pieces = authorization.split(separator: " ", maxSplits: 1)
        guard pieces.count == 2, pieces[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(pieces[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
