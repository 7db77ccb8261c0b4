import NIOHTTP1

/// httpbin's redirect routes: chains of relative or absolute redirects ending at `/get`, and
/// `/redirect-to`; and `/redirect-loop`, which redirects to itself, and `/login-round-trip`, which
/// redirects to itself once to set a cookie.
enum RedirectRoutes {
    static var routes: [Route] {
        [
            Route("/redirect/:n") { request, _ in
                guard let count = request.integerParameter("n") else { return notFound }
                guard count > 0 else { return internalError }
                let absolute = request.queryValue("absolute")?.lowercased() == "true"
                if count == 1 {
                    return .respond(redirect(to: absolute ? "\(request.scheme)://\(request.authority)/get" : "/get"))
                }
                if absolute {
                    return .respond(
                        redirect(to: "\(request.scheme)://\(request.authority)/absolute-redirect/\(count - 1)")
                    )
                }
                return .respond(redirect(to: "/relative-redirect/\(count - 1)"))
            },
            Route("/relative-redirect/:n") { request, _ in
                guard let count = request.integerParameter("n") else { return notFound }
                guard count > 0 else { return internalError }
                let location = count == 1 ? "/get" : "/relative-redirect/\(count - 1)"
                return .respond(
                    ServerResponse(
                        status: .found,
                        headers: [
                            ("Content-Type", "text/html; charset=utf-8"), ("Location", location),
                        ]
                    )
                )
            },
            Route("/absolute-redirect/:n") { request, _ in
                guard let count = request.integerParameter("n") else { return notFound }
                guard count > 0 else { return internalError }
                let path = count == 1 ? "/get" : "/absolute-redirect/\(count - 1)"
                return .respond(redirect(to: "\(request.scheme)://\(request.authority)\(path)"))
            },
            // Not httpbin's: a redirect back to itself, for clients' loop detection; with
            // `?cookie=name`, each one sets the same cookie `name=1` (so every request after the
            // first is the same, cookie and all).
            Route("/redirect-loop", methods: Routes.anyMethod) { request, _ in
                guard let name = request.queryValue("cookie") else { return .respond(redirect(to: "/redirect-loop")) }
                var response = redirect(to: "/redirect-loop?cookie=\(CookieRoutes.quoted(name))")
                response.headers.append(("Set-Cookie", "\(CookieRoutes.quoted(name))=1; Path=/"))
                return .respond(response)
            },
            // Not httpbin's: a login's round trip. Without the cookie `session`, a redirect back
            // here that sets it; with it, the cookies as `/cookies` shows them.
            Route("/login-round-trip") { request, _ in
                let cookies = CookieRoutes.cookies(of: request)
                guard cookies.contains(where: { $0.0 == "session" }) else {
                    var response = redirect(to: "/login-round-trip")
                    response.headers.append(("Set-Cookie", "session=1; Path=/"))
                    return .respond(response)
                }
                var shown: [String: JSONValue] = [:]
                for (name, value) in cookies { shown[name] = .string(value) }
                return .respond(.json(.object(["cookies": .object(shown)])))
            },
            Route("/redirect-to", methods: Routes.anyMethod) { request, _ in
                guard let location = request.queryValue("url") else {
                    return .respond(Router.errorPage(.badRequest, "The url query parameter is required."))
                }
                var status = HTTPResponseStatus.found
                if let code = request.queryValue("status_code").flatMap({ Int($0) }), (300..<400).contains(code) {
                    status = HTTPResponseStatus(statusCode: code)
                }
                return .respond(
                    ServerResponse(
                        status: status,
                        headers: [
                            ("Content-Type", "text/html; charset=utf-8"), ("Location", location),
                        ]
                    )
                )
            },
        ]
    }

    /// A `302` with the small HTML page werkzeug's `redirect()` writes.
    static func redirect(to location: String) -> ServerResponse {
        let body =
            "<!doctype html>\n<html lang=en>\n<title>Redirecting...</title>\n<h1>Redirecting...</h1>\n"
            + "<p>You should be redirected automatically to the target URL: <a href=\"\(location)\">\(location)</a>. "
            + "If not, click the link.\n"
        var response = ServerResponse.text(body, status: .found)
        response.headers.append(("Location", location))
        return response
    }

    static var notFound: RouteOutcome {
        .respond(Router.errorPage(.notFound, "The requested URL was not found on the server."))
    }

    /// httpbin fails an assertion, hence a 500, for a redirect count below 1.
    static var internalError: RouteOutcome {
        .respond(Router.errorPage(.internalServerError, "The redirect count must be at least 1."))
    }
}
