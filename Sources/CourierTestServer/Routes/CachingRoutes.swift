import Foundation
import NIOHTTP1

/// httpbin's caching routes: conditional requests, `Cache-Control`, and entity tags.
enum CachingRoutes {
    static var routes: [Route] {
        [
            Route("/cache") { request, _ in
                if request.headers.first(name: "if-modified-since") != nil
                    || request.headers.first(name: "if-none-match") != nil
                {
                    return .respond(StatusRoutes.response(forCode: 304))
                }
                var response = getResponse(request)
                response.headers.append(("Last-Modified", HTTPDate.now()))
                response.headers.append(
                    ("ETag", UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
                )
                return .respond(response)
            },
            // Not httpbin's: a response with the caching headers the query names, counting the
            // requests that reach it (`TestServer.attempts(forKey:)`), for clients' caches. An
            // `X-Test-ETag` request header stands for a changed resource: it replaces `etag`
            // without changing the URL the cache keys on. In `set-cookie`, `{hit}` is replaced by
            // the request's count, so that each response sets a cookie of its own.
            Route("/cached/:key", methods: Routes.anyMethod) { request, state in
                let key = request.parameters["key"] ?? ""
                let hit = state.recordAttempt(forKey: key)
                var headers: [(String, String)] = [("Date", HTTPDate.now())]
                if let cacheControl = request.queryValue("cache-control") {
                    headers.append(("Cache-Control", cacheControl))
                }
                if let vary = request.queryValue("vary") { headers.append(("Vary", vary)) }
                if let age = request.queryValue("age") { headers.append(("Age", age)) }
                if let cookie = request.queryValue("set-cookie") {
                    headers.append(("Set-Cookie", cookie.replacingOccurrences(of: "{hit}", with: "\(hit)")))
                }
                let failAfter = request.queryValue("fail-after").flatMap { Int($0) }
                if let failAfter, hit > failAfter {
                    return .respond(ServerResponse(status: .serviceUnavailable, headers: headers))
                }
                if let etag = request.headers.first(name: "x-test-etag") ?? request.queryValue("etag") {
                    if tagList(request.headers.first(name: "if-none-match")).contains(etag) {
                        // `not-modified-etag` makes the 304 name another version than the one
                        // asked about, as a confused server (or a changed one) might.
                        let answered = request.queryValue("not-modified-etag") ?? etag
                        headers.append(("ETag", "\"\(answered)\""))
                        return .respond(ServerResponse(status: .notModified, headers: headers))
                    }
                    headers.append(("ETag", "\"\(etag)\""))
                }
                let varied = request.queryValue("vary").flatMap { request.headers.first(name: $0) } ?? ""
                var response = ServerResponse.json(
                    .object(["key": .string(key), "hit": .int(hit), "varied": .string(varied)])
                )
                response.headers.append(contentsOf: headers)
                return .respond(response)
            },
            Route("/cache/:n") { request, _ in
                guard let seconds = request.integerParameter("n") else { return RedirectRoutes.notFound }
                var response = getResponse(request)
                response.headers.append(("Cache-Control", "public, max-age=\(seconds)"))
                return .respond(response)
            },
            Route("/etag/:etag") { request, _ in
                let entityTag = request.parameters["etag"] ?? ""
                let ifNoneMatch = tagList(request.headers.first(name: "if-none-match"))
                let ifMatch = tagList(request.headers.first(name: "if-match"))
                if !ifNoneMatch.isEmpty {
                    if ifNoneMatch.contains(entityTag) || ifNoneMatch.contains("*") {
                        var response = StatusRoutes.response(forCode: 304)
                        response.headers.append(("ETag", entityTag))
                        return .respond(response)
                    }
                } else if !ifMatch.isEmpty, !ifMatch.contains(entityTag), !ifMatch.contains("*") {
                    return .respond(StatusRoutes.response(forCode: 412))
                }
                var response = getResponse(request)
                response.headers.append(("ETag", entityTag))
                return .respond(response)
            },
        ]
    }

    private static func getResponse(_ request: ServerRequest) -> ServerResponse {
        .json(RequestEcho.describe(request, [.url, .args, .headers, .origin]))
    }

    /// The tags of an `If-Match`/`If-None-Match` list, unquoted and without `W/`, as httpbin reads them.
    static func tagList(_ header: String?) -> [String] {
        guard let header else { return [] }
        return header.split(separator: ",").map { part in
            var tag = part.trimmingSpaces()
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            return String(tag.filter { $0 != "\"" })
        }
    }
}
