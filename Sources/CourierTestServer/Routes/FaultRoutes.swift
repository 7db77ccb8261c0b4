import NIOCore
import NIOHTTP1

/// Courier's fault-injection routes, which httpbin lacks, for testing how a client survives a
/// misbehaving server. All live under `/fault/`.
///
/// | route | what happens |
/// |---|---|
/// | `/fault/drop/:n?after=N&mode=close\|reset&key=K&times=T` | `/range/:n`'s bytes (honours `Range`), the connection ends after `N` body bytes (default `n/2`); with `key`, only the first `T` (default 1) requests for it fail |
/// | `/fault/close`, `/fault/reset` | the connection ends (FIN, or RST) before any response |
/// | `/fault/content-length/:n?declared=D` | `n` body bytes under `Content-Length: D` (default `2n`), then close |
/// | `/fault/hang?seconds=S` | never answers; closes after `S` s (default: the server's maximum wait) |
/// | `/fault/retry-after/:key?times=K&seconds=S&status=C&date=true` | the first `K` (default 2) requests answer `C` (default 503) with `Retry-After: S` (default 1; an HTTP date with `date=true`), later ones 200 |
/// | `/fault/flaky/:key?times=K&status=C&fault=status\|drop\|reset` | the first `K` requests fail with status `C` (default 500) or a dropped or reset connection, later ones 200 |
/// | `/fault/attempts/:key` | how many requests the keyed routes counted for `key` |
/// | `/fault/slow-headers?seconds=S` | the head trickles out over `S` s (default 2), then a `/get` body |
/// | `/fault/huge-header?bytes=N` | a `X-Huge-Header` of `N` bytes (default 65,536), then a `/get` body |
/// | `/fault/upload/stall?after=N&seconds=S` (POST, PUT, PATCH) | reads `N` body bytes (default 0), then reads nothing more and never answers, so the client's writes back up; closes after `S` s (default: the server's maximum wait) |
/// | `/fault/upload/reset?after=N` (POST, PUT, PATCH) | reads `N` body bytes (default 1 MiB), then resets the connection (RST) with the rest unread |
/// | `/fault/gzip-bomb/:mib` | `Content-Encoding: gzip` over `mib` MiB of zeros (at most 4,096): about 1 KB on the wire per MiB inflated |
enum FaultRoutes {
    static var routes: [Route] {
        [
            Route("/fault/drop/:n") { request, state in drop(request, state: state) },
            Route("/fault/close", methods: Routes.anyMethod) { _, _ in .close },
            Route("/fault/reset", methods: Routes.anyMethod) { _, _ in .reset },
            Route("/fault/content-length/:n") { request, _ in
                guard let length = request.integerParameter("n"), length <= Routes.largestGeneratedBody else {
                    return RedirectRoutes.notFound
                }
                let declared = request.queryInteger("declared", default: length * 2)
                var response = ServerResponse(
                    status: .ok,
                    headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(declared))],
                    body: length > 0 ? .stream(ByteRange.patternStream(0...(length - 1), chunkSize: 64 * 1024)) : .empty
                )
                response.closesConnection = true
                return .respond(response)
            },
            Route("/fault/hang", methods: Routes.anyMethod) { request, state in
                let limit = state.configuration.maximumWait
                let seconds = request.queryNumber("seconds", default: .greatestFiniteMagnitude)
                return .hang(min(.fromSeconds(seconds), limit))
            },
            Route("/fault/retry-after/:key", methods: Routes.anyMethod) { request, state in
                retryAfter(request, state: state)
            },
            Route("/fault/flaky/:key", methods: Routes.anyMethod) { request, state in flaky(request, state: state) },
            Route("/fault/attempts/:key") { request, state in
                let key = request.parameters["key"] ?? ""
                return .respond(.json(.object(["key": .string(key), "attempts": .int(state.attempts(forKey: key))])))
            },
            Route("/fault/slow-headers", methods: Routes.anyMethod) { request, state in
                var response = ServerResponse.json(RequestEcho.describe(request, [.url, .args, .headers, .origin]))
                response.headPacing = min(
                    .fromSeconds(request.queryNumber("seconds", default: 2)),
                    state.configuration.maximumWait
                )
                return .respond(response)
            },
            Route(
                "/fault/upload/stall",
                methods: [.POST, .PUT, .PATCH],
                handler: .streaming { request, state in
                    let seconds = request.queryNumber("seconds", default: .greatestFiniteMagnitude)
                    let wait = min(.fromSeconds(seconds), state.configuration.maximumWait)
                    return UploadFaultSink(after: request.queryInteger("after", default: 0), fault: .stall(wait))
                }
            ),
            Route(
                "/fault/upload/reset",
                methods: [.POST, .PUT, .PATCH],
                handler: .streaming { request, _ in
                    UploadFaultSink(after: request.queryInteger("after", default: 1 << 20), fault: .reset)
                }
            ),
            Route("/fault/gzip-bomb/:mib") { request, _ in
                guard let mebibytes = request.integerParameter("mib"), (0...4096).contains(mebibytes),
                    let body = Compression.compressedZeros(count: mebibytes << 20, format: .gzip)
                else { return RedirectRoutes.notFound }
                return .respond(
                    ServerResponse(
                        status: .ok,
                        headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip")],
                        body: .bytes(body)
                    )
                )
            },
            Route("/fault/huge-header", methods: Routes.anyMethod) { request, _ in
                let size = min(max(0, request.queryInteger("bytes", default: 65_536)), 64 * 1024 * 1024)
                var response = ServerResponse.json(RequestEcho.describe(request, [.url, .args, .headers, .origin]))
                response.headers.append(("X-Huge-Header", String(repeating: "x", count: size)))
                return .respond(response)
            },
        ]
    }

    /// Whether a keyed request should fail: always without a key, else for the first `times` requests.
    private static func shouldFail(_ request: ServerRequest, state: ServerState, defaultTimes: Int) -> (Bool, Int) {
        guard let key = request.parameters["key"] ?? request.queryValue("key") else { return (true, 0) }
        let attempt = state.recordAttempt(forKey: key)
        return (attempt <= request.queryInteger("times", default: defaultTimes), attempt)
    }

    private static func drop(_ request: ServerRequest, state: ServerState) -> RouteOutcome {
        guard let length = request.integerParameter("n") else { return RedirectRoutes.notFound }
        var response = DynamicDataRoutes.range(request, length: length, maximumWait: state.configuration.maximumWait)
        let (fails, _) = shouldFail(request, state: state, defaultTimes: 1)
        if fails, response.status == .ok || response.status == .partialContent {
            response.truncation = ServerResponse.Truncation(
                afterBodyBytes: max(0, request.queryInteger("after", default: length / 2)),
                reset: request.queryValue("mode") == "reset"
            )
        }
        return .respond(response)
    }

    private static func retryAfter(_ request: ServerRequest, state: ServerState) -> RouteOutcome {
        let (fails, attempt) = shouldFail(request, state: state, defaultTimes: 2)
        guard fails else { return .respond(success(request, attempt: attempt)) }
        // At most ten years, so the date arithmetic cannot overflow.
        let seconds = min(max(0, request.queryInteger("seconds", default: 1)), 315_360_000)
        let value =
            request.queryValue("date") == "true"
            ? HTTPDate.format(secondsSince1970: HTTPDate.currentSeconds() + seconds) : String(seconds)
        var response = ServerResponse.json(
            .object(["key": .string(request.parameters["key"] ?? ""), "attempts": .int(attempt)]),
            status: status(request, default: 503)
        )
        response.headers.append(("Retry-After", value))
        return .respond(response)
    }

    private static func flaky(_ request: ServerRequest, state: ServerState) -> RouteOutcome {
        let (fails, attempt) = shouldFail(request, state: state, defaultTimes: 2)
        guard fails else { return .respond(success(request, attempt: attempt)) }
        switch request.queryValue("fault") {
        case "drop": return .close
        case "reset": return .reset
        default:
            return .respond(
                .json(
                    .object(["key": .string(request.parameters["key"] ?? ""), "attempts": .int(attempt)]),
                    status: status(request, default: 500)
                )
            )
        }
    }

    /// The `status` query value when it is a valid code (100...999), else `defaultCode`.
    private static func status(_ request: ServerRequest, default defaultCode: Int) -> HTTPResponseStatus {
        let code = request.queryInteger("status", default: defaultCode)
        return HTTPResponseStatus(statusCode: (100...999).contains(code) ? code : defaultCode)
    }

    private static func success(_ request: ServerRequest, attempt: Int) -> ServerResponse {
        .json(.object(["key": .string(request.parameters["key"] ?? ""), "attempts": .int(attempt)]))
    }
}

/// Reads a request body up to a point, then stalls or resets: for clients whose body writes are
/// cut off or held back mid-upload.
///
/// Guarded by event-loop confinement: the connection feeds it on its event loop only.
final class UploadFaultSink: RequestBodySink {
    /// What happens once ``after`` bytes were read.
    enum Fault {
        /// Stop reading and never answer; the connection closes after the duration.
        case stall(TimeAmount)
        /// Reset the connection.
        case reset
    }

    private let after: Int
    private let fault: Fault
    private var byteCount = 0

    init(after: Int, fault: Fault) {
        self.after = max(0, after)
        self.fault = fault
    }

    func consume(_ chunk: ByteBuffer) -> BodySinkVerdict {
        byteCount += chunk.readableBytes
        guard byteCount >= after else { return .keepReading }
        switch fault {
        case .stall(let wait): return .stopReading(closeAfter: wait)
        case .reset: return .reset
        }
    }

    /// A body shorter than ``after`` meets the fault at its end.
    func finish() -> RouteOutcome {
        switch fault {
        case .stall(let wait): return .hang(wait)
        case .reset: return .reset
        }
    }
}
