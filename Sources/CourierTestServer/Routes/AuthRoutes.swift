import CourierHashes
import Foundation
import NIOHTTP1

/// httpbin's authentication routes: Basic (announced and hidden), Bearer and Digest.
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
            Route("/digest-auth/:qop/:user/:passwd") { request, _ in
                .respond(digest(request, algorithm: "MD5", staleAfter: "never"))
            },
            Route("/digest-auth/:qop/:user/:passwd/:algorithm") { request, _ in
                .respond(digest(request, algorithm: request.parameters["algorithm"] ?? "", staleAfter: "never"))
            },
            Route("/digest-auth/:qop/:user/:passwd/:algorithm/:stale_after") { request, _ in
                .respond(
                    digest(
                        request,
                        algorithm: request.parameters["algorithm"] ?? "",
                        staleAfter: request.parameters["stale_after"] ?? ""
                    )
                )
            },
        ]
    }

    // MARK: - Digest

    /// The realm httpbin names in every Digest challenge.
    static let digestRealm = "me@kennethreitz.com"

    /// httpbin's `/digest-auth/:qop/:user/:passwd[/:algorithm[/:stale_after]]`, as a client sees it.
    ///
    /// - `qop` is `auth` or `auth-int` (anything else offers both); `algorithm` is `MD5`,
    ///   `SHA-256` or `SHA-512` (anything else is `MD5`; not `-sess`, nor SHA-512-256).
    /// - Without a Digest `Authorization` the answer is a `401` whose `WWW-Authenticate` carries a
    ///   fresh random nonce and opaque (hex digests of the algorithm's length), and the cookies
    ///   `stale_after=<stale_after>` and `fake=fake_value`.
    /// - With one, the `response` is recomputed from the password in the path, the request's
    ///   method, target and body, and the `username`, `realm`, `nonce`, `nc`, `cnonce`, `qop` and
    ///   `algorithm` the client sent (as httpbin does, the username is taken from the header, not
    ///   compared with the path's). A match answers `200 {"authenticated": true, "user": …}`;
    ///   a mismatch a new challenge, and the cookie `last_nonce=<nonce>`.
    /// - Staleness, driven by cookies: an answer reusing the nonce of `last_nonce`, or sent while
    ///   the cookie `stale_after` is `0`, gets a new challenge with `stale=True`. Each success
    ///   counts `stale_after` down by one (a value that is not a number becomes `never`).
    /// - `?require-cookie=1` also demands the `fake` cookie: without any cookie a challenge,
    ///   with the wrong one a `403`.
    /// - Courier's addition: `?nonce=VALUE` (letters and digits) makes every challenge carry that
    ///   nonce instead of a random one, and a success then names the `nc` it was answered with in
    ///   a `Courier-Digest-Nonce-Count` header: for clients that count a nonce answered again.
    ///
    /// Where httpbin answers malformed input with a `500` (an `Authorization` lacking `nc` or
    /// `cnonce` with a `qop`, a `qop` it does not know), this route answers a new challenge; and
    /// the `uri` hashed is the target exactly as sent, where httpbin decodes the path.
    static func digest(_ request: ServerRequest, algorithm requested: String, staleAfter: String) -> ServerResponse {
        let algorithm = ["MD5", "SHA-256", "SHA-512"].contains(requested) ? requested : "MD5"
        let qop = request.parameters["qop"].flatMap { ["auth", "auth-int"].contains($0) ? $0 : nil }
        let password = request.parameters["passwd"] ?? ""
        let requiresCookie = ["1", "t", "true"].contains(request.queryValue("require-cookie")?.lowercased() ?? "")
        let cookies = Dictionary(CookieRoutes.cookies(of: request), uniquingKeysWith: { _, last in last })

        func challenge(stale: Bool, lastNonce: String?) -> ServerResponse {
            var response = digestChallenge(request, qop: qop, algorithm: algorithm, stale: stale)
            response.headers.append(("Set-Cookie", "stale_after=\(CookieRoutes.quoted(staleAfter)); Path=/"))
            if let lastNonce {
                response.headers.append(("Set-Cookie", "last_nonce=\(CookieRoutes.quoted(lastNonce)); Path=/"))
            }
            response.headers.append(("Set-Cookie", "fake=fake_value; Path=/"))
            return response
        }

        guard let credentials = digestCredentials(of: request),
            !requiresCookie || request.headers.contains(name: "cookie")
        else { return challenge(stale: false, lastNonce: nil) }
        if requiresCookie, cookies["fake"] != "fake_value" {
            var response = ServerResponse.json(
                .object(["errors": .array([.string("missing cookie set on challenge")])]),
                status: .forbidden
            )
            response.headers.append(("Set-Cookie", "fake=fake_value; Path=/"))
            return response
        }
        let nonce = credentials["nonce"] ?? ""
        let staleAfterCookie = cookies["stale_after"]
        if cookies["last_nonce"].map({ $0 == nonce }) == true || staleAfterCookie == "0" {
            return challenge(stale: true, lastNonce: nonce)
        }
        guard let expected = digestResponse(credentials, password: password, request: request),
            credentials["response"] == expected
        else { return challenge(stale: false, lastNonce: nonce) }

        var response = ServerResponse.json(
            .object(["authenticated": .bool(true), "user": .string(request.parameters["user"] ?? "")])
        )
        response.headers.append(("Set-Cookie", "fake=fake_value; Path=/"))
        if fixedNonce(of: request) != nil, let count = credentials["nc"] {
            response.headers.append(("Courier-Digest-Nonce-Count", count))
        }
        if let staleAfterCookie {
            let next = Int(staleAfterCookie).map { String($0 - 1) } ?? "never"
            response.headers.append(("Set-Cookie", "stale_after=\(CookieRoutes.quoted(next)); Path=/"))
        }
        return response
    }

    /// The nonce `?nonce=` asks every challenge to carry, if it is letters and digits (so it can
    /// be sent quoted as it is).
    private static func fixedNonce(of request: ServerRequest) -> String? {
        guard let nonce = request.queryValue("nonce"), !nonce.isEmpty, nonce.utf8.count <= 64,
            nonce.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        else { return nil }
        return nonce
    }

    /// A `401` with httpbin's Digest challenge: werkzeug's field, parameters in its order.
    private static func digestChallenge(
        _ request: ServerRequest,
        qop: String?,
        algorithm: String,
        stale: Bool
    ) -> ServerResponse {
        var generator = SystemRandomNumberGenerator()
        let random = { (0..<10).map { _ in UInt8.random(in: .min ... .max, using: &generator) } }
        let nonceSeed = Array("\(request.remoteAddress):\(Date().timeIntervalSince1970):".utf8) + random()
        let nonce = fixedNonce(of: request) ?? digestHash(nonceSeed, algorithm: algorithm)
        let opaque = digestHash(random(), algorithm: algorithm)
        let field =
            "Digest realm=\"\(digestRealm)\", nonce=\"\(nonce)\", opaque=\"\(opaque)\", "
            + "qop=\"\(qop ?? "auth, auth-int")\", algorithm=\(algorithm), stale=\(stale ? "True" : "False")"
        return ServerResponse(
            status: .unauthorized,
            headers: [("Content-Type", "text/html; charset=utf-8"), ("WWW-Authenticate", field)]
        )
    }

    /// The `response` a client knowing `password` sends with these parameters, computed as
    /// httpbin does (RFC 2617's forms, the hash chosen by the `algorithm` the client sent);
    /// `nil` when the parameters make no answer (a `qop` without `nc` or `cnonce`, an unknown `qop`).
    private static func digestResponse(
        _ credentials: [String: String],
        password: String,
        request: ServerRequest
    ) -> String? {
        let algorithm = credentials["algorithm"] ?? "MD5"
        func hash(_ text: String) -> String { digestHash(Array(text.utf8), algorithm: algorithm) }
        let username = credentials["username"] ?? ""
        let realm = credentials["realm"] ?? ""
        let nonce = credentials["nonce"] ?? ""
        let firstHash = hash("\(username):\(realm):\(password)")
        let method = request.method.rawValue
        switch credentials["qop"] {
        case nil:
            return hash("\(firstHash):\(nonce):\(hash("\(method):\(request.target)"))")
        case let qop? where qop == "auth" || qop == "auth-int":
            guard let count = credentials["nc"], let clientNonce = credentials["cnonce"] else { return nil }
            var second = "\(method):\(request.target)"
            if qop == "auth-int" { second += ":" + digestHash(request.body, algorithm: algorithm) }
            return hash("\(firstHash):\(nonce):\(count):\(clientNonce):\(qop):\(hash(second))")
        default:
            return nil
        }
    }

    /// httpbin's `H`: SHA-256 or SHA-512 when named exactly so, else MD5.
    private static func digestHash(_ bytes: [UInt8], algorithm: String) -> String {
        switch algorithm {
        case "SHA-256": SHA256.hexDigest(of: bytes)
        case "SHA-512": SHA512.hexDigest(of: bytes)
        default: MD5.hexDigest(of: bytes)
        }
    }

    /// The parameters of a Digest `Authorization` header (names lowercased, quoted values
    /// unquoted), or `nil` when there is none or the scheme is not Digest.
    ///
    /// Reads the field once, front to back: commas inside quoted strings do not split, a
    /// backslash in a quoted string escapes the next byte, an item without `=` is skipped.
    static func digestCredentials(of request: ServerRequest) -> [String: String]? {
        guard let authorization = request.headers.first(name: "authorization") else { return nil }
        let bytes = Array(authorization.utf8)
        var index = 0
        while index < bytes.count, bytes[index] != UInt8(ascii: " ") { index += 1 }
        guard String(decoding: bytes[..<index], as: UTF8.self).lowercased() == "digest" else { return nil }
        var parameters: [String: String] = [:]
        while index < bytes.count {
            while index < bytes.count,
                [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ",")].contains(bytes[index])
            {
                index += 1
            }
            let nameStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ",") {
                index += 1
            }
            let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
                .trimmingCharacters(in: .whitespaces).lowercased()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            let value: String
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                var quoted: [UInt8] = []
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                    quoted.append(bytes[index])
                    index += 1
                }
                index += 1
                value = String(decoding: quoted, as: UTF8.self)
            } else {
                let valueStart = index
                while index < bytes.count, bytes[index] != UInt8(ascii: ",") { index += 1 }
                value = String(decoding: bytes[valueStart..<index], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            }
            if !name.isEmpty { parameters[name] = value }
        }
        return parameters
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
