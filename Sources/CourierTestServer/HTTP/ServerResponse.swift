import NIOCore
import NIOHTTP1

/// A response a route wants written, with the pacing and faults the server should apply to it.
struct ServerResponse {
    /// The status line's code and reason.
    var status: HTTPResponseStatus
    /// Header fields in the order they are written. `Content-Length` given here is sent as is,
    /// even when it disagrees with the body (see the wrong-length fault).
    var headers: [(String, String)]
    /// The body.
    var body: ResponseBody
    /// How long to wait before writing anything.
    var delay: TimeAmount = .zero
    /// When set, the head is written in small pieces spread over this duration.
    var headPacing: TimeAmount?
    /// When set, the connection ends after this many body bytes.
    var truncation: Truncation?
    /// Whether the connection closes once the response is written.
    var closesConnection = false

    /// How a truncated response ends its connection.
    struct Truncation {
        /// Body bytes written before the connection ends.
        var afterBodyBytes: Int
        /// Whether the connection is reset (RST) rather than closed (FIN).
        var reset: Bool
    }

    init(status: HTTPResponseStatus, headers: [(String, String)] = [], body: ResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON document written as Flask's `jsonify` writes it.
    static func json(_ value: JSONValue, status: HTTPResponseStatus = .ok) -> ServerResponse {
        ServerResponse(
            status: status,
            headers: [("Content-Type", "application/json")],
            body: .bytes(Array(value.prettyPrinted().utf8))
        )
    }

    /// A text body with the given content type.
    static func text(
        _ text: String,
        contentType: String = "text/html; charset=utf-8",
        status: HTTPResponseStatus = .ok
    ) -> ServerResponse {
        ServerResponse(status: status, headers: [("Content-Type", contentType)], body: .bytes(Array(text.utf8)))
    }

    /// The value of header `name` set so far, compared case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.0.equalsIgnoringCase(name) }?.1
    }

    /// This response as it goes out on any connection: a `500` instead if a header would carry CR,
    /// LF or NUL, and with what every httpbin answer carries (`Server`, `Date`, the CORS headers).
    func prepared(for request: ServerRequest) -> ServerResponse {
        var response = self
        // A route may echo client input into a header (redirect-to, response-headers, etag,
        // cookies); a CR, LF or NUL there would forge headers, so such answers become a 500, as
        // httpbin's are.
        let forged = response.headers.contains { name, value in
            (name + value).utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 } || name.isEmpty
        }
        if forged {
            response = Router.errorPage(.internalServerError, "A response header would contain CR, LF or NUL.")
        }
        response.headers.insert(contentsOf: [("Server", "CourierTestServer"), ("Date", HTTPDate.now())], at: 0)
        response.headers.append(("Access-Control-Allow-Origin", request.headers.first(name: "origin") ?? "*"))
        response.headers.append(("Access-Control-Allow-Credentials", "true"))
        if request.method == .OPTIONS {
            response.headers.append(("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, PATCH, OPTIONS"))
            response.headers.append(("Access-Control-Max-Age", "3600"))
            if let requested = request.headers.first(name: "access-control-request-headers") {
                response.headers.append(("Access-Control-Allow-Headers", requested))
            }
        }
        return response
    }
}

/// The body of a ``ServerResponse``.
enum ResponseBody {
    /// No body.
    case empty
    /// A body known in full.
    case bytes([UInt8])
    /// A body produced chunk by chunk as the client reads it.
    case stream(BodyStream)
}

/// A body produced lazily, one chunk at a time, so a large or slow body never sits in memory.
struct BodyStream {
    /// The body's length if known (sent as `Content-Length`), else `nil` (sent chunked).
    var length: Int?
    /// The pause between chunks, for routes that drip their body.
    var interval: TimeAmount = .zero
    /// Returns the next chunk, or `nil` at the end. Called on the connection's event loop only.
    var nextChunk: (inout ByteBufferAllocator) -> ByteBuffer?
}

/// What a route asks the connection to do once the request has been read.
enum RouteOutcome {
    /// Write this response.
    case respond(ServerResponse)
    /// Never answer; close the connection after this long (or when the client or server closes it).
    case hang(TimeAmount)
    /// Close the connection without answering (a FIN).
    case close
    /// Reset the connection without answering (an RST).
    case reset
}

extension String {
    /// Whether this string equals `other`, ignoring ASCII case.
    func equalsIgnoringCase(_ other: String) -> Bool {
        self.utf8.count == other.utf8.count && self.lowercased() == other.lowercased()
    }
}
