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
}
