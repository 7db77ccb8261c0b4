import NIOHTTP1

/// `/status/:codes`: answers with a status code, or one drawn from a weighted list (`200:3,500:1`).
enum StatusRoutes {
    static var routes: [Route] {
        [
            Route("/status/:codes", methods: Routes.anyMethod) { request, _ in
                guard let code = pickCode(request.parameters["codes"] ?? "") else {
                    return .respond(.text("Invalid status code", contentType: plainText, status: .badRequest))
                }
                return .respond(response(forCode: code))
            }
        ]
    }

    /// The content type of httpbin's plain-text error answers (werkzeug's `Response` default).
    static let plainText = "text/plain; charset=utf-8"

    /// One code from `200` or `200,201` or `200:0.9,500:0.1`, or `nil` if any piece is malformed.
    static func pickCode(_ codes: String) -> Int? {
        var choices: [(code: Int, weight: Double)] = []
        for choice in codes.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = choice.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(pieces.count), let code = Int(pieces[0]), (100...999).contains(code) else {
                return nil
            }
            let weight = pieces.count == 2 ? Double(pieces[1]) : 1
            guard let weight, weight.isFinite, weight >= 0 else { return nil }
            choices.append((code, weight))
        }
        let total = choices.reduce(0) { $0 + $1.weight }
        guard let last = choices.last else { return nil }
        guard total.isFinite else { return nil }
        guard choices.count > 1, total > 0 else { return last.code }
        var draw = Double.random(in: 0..<total)
        for choice in choices {
            if draw < choice.weight { return choice.code }
            draw -= choice.weight
        }
        return last.code
    }

    /// The answer httpbin gives for a status code: most are empty, a few carry headers or a body.
    static func response(forCode code: Int) -> ServerResponse {
        let status = HTTPResponseStatus(statusCode: code)
        switch code {
        case 301, 302, 303, 305, 307:
            return ServerResponse(status: status, headers: [("location", "/redirect/1")])
        case 401:
            return ServerResponse(status: status, headers: [("WWW-Authenticate", "Basic realm=\"Fake Realm\"")])
        case 402:
            return ServerResponse(
                status: status,
                headers: [("x-more-info", "http://vimeo.com/22053820")],
                body: .bytes(Array("Payment required: this route always asks for payment.".utf8))
            )
        case 406:
            let body = JSONValue.object([
                "message": .string("Client did not request a supported media type."),
                "accept": .array(
                    ["image/webp", "image/svg+xml", "image/jpeg", "image/png", "image/*"].map(JSONValue.string)
                ),
            ])
            return ServerResponse(
                status: status,
                headers: [("Content-Type", "application/json")],
                body: .bytes(Array(body.compact().utf8))
            )
        case 304:
            // werkzeug drops entity headers from a 304, Content-Type included.
            return ServerResponse(status: status)
        case 407:
            return ServerResponse(status: status, headers: [("Proxy-Authenticate", "Basic realm=\"Fake Realm\"")])
        case 418:
            return ServerResponse(
                status: status,
                headers: [("x-more-info", "http://tools.ietf.org/html/rfc2324")],
                body: .bytes(Array(teapot.utf8))
            )
        default:
            return ServerResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")])
        }
    }

    private static let teapot = """

            ~ I'm a teapot (RFC 2324) ~
                  ;,'
              _o_    ;:;'
          ,-.'---`.__ ;
         ((j`=====',-'
          `-\\     /
             `-=-'

        """
}
