import Foundation
import NIOHTTP1

/// httpbin's HTTP-method and request-inspection routes: the request echoed back as JSON.
enum InspectionRoutes {
    static var routes: [Route] {
        let bodyFields: [RequestEcho.Field] = [.url, .args, .form, .data, .origin, .headers, .files, .json]
        let anything: @Sendable (ServerRequest, ServerState) -> RouteOutcome = { request, _ in
            .respond(.json(RequestEcho.describe(request, bodyFields + [.method])))
        }
        return [
            Route("/get") { request, _ in
                .respond(.json(RequestEcho.describe(request, [.url, .args, .headers, .origin])))
            },
            Route("/post", methods: [.POST]) { request, _ in .respond(.json(RequestEcho.describe(request, bodyFields)))
            },
            Route("/put", methods: [.PUT]) { request, _ in .respond(.json(RequestEcho.describe(request, bodyFields))) },
            Route("/patch", methods: [.PATCH]) { request, _ in
                .respond(.json(RequestEcho.describe(request, bodyFields)))
            },
            Route("/delete", methods: [.DELETE]) { request, _ in
                .respond(.json(RequestEcho.describe(request, bodyFields)))
            },
            Route("/anything", methods: Routes.anyMethod, anything),
            Route("/anything/*path", methods: Routes.anyMethod, anything),
            Route("/inflate", methods: Routes.anyMethod) { request, _ in inflated(request, bodyFields + [.method]) },
            Route("/headers") { request, _ in .respond(.json(RequestEcho.describe(request, [.headers]))) },
            Route("/ip") { request, _ in .respond(.json(.object(["origin": .string(RequestEcho.origin(of: request))])))
            },
            Route("/user-agent") { request, _ in
                let agent = request.headers.first(name: "user-agent").map(JSONValue.string) ?? .null
                return .respond(.json(.object(["user-agent": agent])))
            },
            Route("/uuid") { _, _ in
                .respond(.json(.object(["uuid": .string(UUID().uuidString.lowercased())])))
            },
        ]
    }

    /// Bodies `/inflate` accepts inflate to this much at most: enough for any test, too little
    /// for a decompression bomb to hurt.
    static let inflatedBodyLimit = 16 << 20

    /// `/inflate`: the request echoed as `/anything` does, its body inflated first (zlib, gzip or
    /// raw deflate, told apart by their headers, whatever `Content-Encoding` says), with
    /// `compressedLength` added; a `400` if
    /// the body is no compressed stream. Not in httpbin: it checks request compression.
    private static func inflated(_ request: ServerRequest, _ fields: [RequestEcho.Field]) -> RouteOutcome {
        switch Compression.inflate(request.body, limit: inflatedBodyLimit) {
        case .failure(let failure):
            let reason = failure == .tooLarge ? "inflates to more than \(inflatedBodyLimit) bytes" : "not compressed"
            return .respond(.json(.object(["error": .string("body \(reason)")]), status: .badRequest))
        case .success(let body):
            var plain = request
            plain.body = body
            guard case .object(var object) = RequestEcho.describe(plain, fields) else { return .close }
            object["compressedLength"] = .int(request.body.count)
            return .respond(.json(.object(object)))
        }
    }
}
