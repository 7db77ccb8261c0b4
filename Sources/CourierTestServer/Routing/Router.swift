import NIOCore
import NIOHTTP1

/// A route: a path pattern, the methods it answers, and what it does.
struct Route: Sendable {
    /// One segment of a path pattern.
    enum Segment: Sendable, Equatable {
        /// Matches exactly this text.
        case literal(String)
        /// Matches any one segment and captures it under this name.
        case parameter(String)
        /// Matches the rest of the path, zero or more segments, captured under this name.
        case remainder(String)
    }

    /// How the route takes the request body.
    enum Handler: Sendable {
        /// The body is read whole (up to the server's limit) before the route runs.
        case buffered(@Sendable (ServerRequest, ServerState) -> RouteOutcome)
        /// The body is handed to a sink chunk by chunk, for bodies of any size.
        case streaming(@Sendable (ServerRequest, ServerState) -> any RequestBodySink)
    }

    let pattern: [Segment]
    let methods: [HTTPMethod]
    let handler: Handler

    /// Creates a route from a pattern such as `/basic-auth/:user/:passwd` or `/anything/*path`.
    init(_ pattern: String, methods: [HTTPMethod] = [.GET], handler: Handler) {
        self.pattern = pattern.split(separator: "/").map { segment in
            if segment.hasPrefix(":") { return .parameter(String(segment.dropFirst())) }
            if segment.hasPrefix("*") { return .remainder(String(segment.dropFirst())) }
            return .literal(String(segment))
        }
        self.methods = methods
        self.handler = handler
    }

    /// A route whose body is read whole.
    init(
        _ pattern: String,
        methods: [HTTPMethod] = [.GET],
        _ respond: @escaping @Sendable (ServerRequest, ServerState) -> RouteOutcome
    ) {
        self.init(pattern, methods: methods, handler: .buffered(respond))
    }

    /// The captured parameters if `segments` match this pattern.
    func match(_ segments: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in pattern.enumerated() {
            switch segment {
            case .remainder(let name):
                parameters[name] = segments.dropFirst(index).map {
                    FormDecoding.decodeComponent($0, plusIsSpace: false)
                }
                .joined(separator: "/")
                return parameters
            case .literal(let text):
                guard index < segments.count,
                    FormDecoding.decodeComponent(segments[index], plusIsSpace: false) == text
                else { return nil }
            case .parameter(let name):
                guard index < segments.count else { return nil }
                parameters[name] = FormDecoding.decodeComponent(segments[index], plusIsSpace: false)
            }
        }
        return segments.count == pattern.count ? parameters : nil
    }
}

/// What a ``RequestBodySink`` wants done after a piece of the body.
enum BodySinkVerdict {
    /// Read on.
    case keepReading
    /// Read nothing more from the connection, so the client's writes back up, and close it after
    /// the duration; the request is never answered.
    case stopReading(closeAfter: TimeAmount)
    /// End the connection at once with a reset (RST), the rest of the body unread.
    case reset
}

/// Receives a streamed request body; see ``Route/Handler/streaming(_:)``.
protocol RequestBodySink: AnyObject {
    /// Takes the next piece of the body, and says whether to read on.
    func consume(_ chunk: ByteBuffer) -> BodySinkVerdict
    /// Called once the body has ended; returns what to answer.
    func finish() -> RouteOutcome
}

/// Finds the route for a request: the first whose pattern and method match.
struct Router: Sendable {
    /// What routing decided for a request head.
    enum Resolution {
        /// This route handles it, with these path parameters.
        case route(Route, parameters: [String: String])
        /// No route handles it; answer with this response straight away.
        case response(ServerResponse)
    }

    private(set) var routes: [Route] = []

    /// Adds routes; earlier routes win when patterns overlap.
    mutating func add(_ newRoutes: [Route]) {
        routes.append(contentsOf: newRoutes)
    }

    /// Routes a request. `HEAD` is answered by the `GET` route (the writer drops the body) and
    /// `OPTIONS` by an automatic answer listing the allowed methods, as Flask does.
    func resolve(method: HTTPMethod, path: String) -> Resolution {
        // Empty segments are kept, so `/get/` and `//get` are not `/get` (Flask answers 404 too).
        let segments = Array(path.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
        var allowed: Set<String> = []
        for route in routes {
            guard let parameters = route.match(segments) else { continue }
            if route.methods.contains(method) || (method == .HEAD && route.methods.contains(.GET)) {
                return .route(route, parameters: parameters)
            }
            allowed.formUnion(route.methods.map(\.rawValue))
        }
        guard !allowed.isEmpty else {
            return .response(
                Self.errorPage(
                    .notFound,
                    "The requested URL was not found on the server. If you "
                        + "entered the URL manually please check your spelling and try again."
                )
            )
        }
        if allowed.contains("GET") { allowed.insert("HEAD") }
        allowed.insert("OPTIONS")
        let allow = ("Allow", allowed.sorted().joined(separator: ", "))
        if method == .OPTIONS {
            return .response(
                ServerResponse(status: .ok, headers: [("Content-Type", "text/html; charset=utf-8"), allow])
            )
        }
        var response = Self.errorPage(.methodNotAllowed, "The method is not allowed for the requested URL.")
        response.headers.append(allow)
        return .response(response)
    }

    /// An HTML error page like the ones werkzeug writes.
    static func errorPage(_ status: HTTPResponseStatus, _ message: String) -> ServerResponse {
        let title = "\(status.code) \(status.reasonPhrase)"
        return .text(
            "<!doctype html>\n<html lang=en>\n<title>\(title)</title>\n<h1>\(status.reasonPhrase)</h1>\n"
                + "<p>\(message)</p>\n",
            status: status
        )
    }
}
