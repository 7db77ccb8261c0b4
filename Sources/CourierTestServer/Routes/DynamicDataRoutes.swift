import NIOCore
import NIOHTTP1

/// httpbin's dynamic-data routes: random bytes (seedable, identical to httpbin's), streams, ranges,
/// a drip, and delays.
enum DynamicDataRoutes {
    static var routes: [Route] {
        [
            Route("/bytes/:n") { request, _ in
                guard let count = request.integerParameter("n") else { return RedirectRoutes.notFound }
                return .respond(
                    ServerResponse(
                        status: .ok,
                        headers: [("Content-Type", "application/octet-stream")],
                        body: .stream(
                            randomStream(
                                count: min(count, Routes.largestGeneratedBody),
                                seed: seed(of: request),
                                chunkSize: 64 * 1024,
                                knownLength: true
                            )
                        )
                    )
                )
            },
            Route("/stream-bytes/:n") { request, _ in
                guard let count = request.integerParameter("n") else { return RedirectRoutes.notFound }
                let chunkSize = Routes.chunkSize(request.queryInteger("chunk_size", default: 10 * 1024))
                return .respond(
                    ServerResponse(
                        status: .ok,
                        headers: [("Content-Type", "application/octet-stream")],
                        body: .stream(
                            randomStream(
                                count: min(count, Routes.largestGeneratedBody),
                                seed: seed(of: request),
                                chunkSize: chunkSize,
                                knownLength: false
                            )
                        )
                    )
                )
            },
            Route("/stream/:n") { request, _ in
                guard let count = request.integerParameter("n") else { return RedirectRoutes.notFound }
                return .respond(jsonLines(request, count: min(count, 100)))
            },
            Route("/range/:n") { request, state in
                guard let length = request.integerParameter("n") else { return RedirectRoutes.notFound }
                return .respond(range(request, length: length, maximumWait: state.configuration.maximumWait))
            },
            Route("/drip") { request, state in .respond(drip(request, maximumWait: state.configuration.maximumWait)) },
            Route("/delay/:n", methods: Routes.anyMethod) { request, state in
                guard let seconds = request.parameters["n"].flatMap({ Double($0) }), seconds >= 0 else {
                    return RedirectRoutes.internalError
                }
                var response = ServerResponse.json(
                    RequestEcho.describe(request, [.url, .args, .form, .data, .origin, .headers, .files])
                )
                response.delay = min(.fromSeconds(seconds, cappedAt: 10), state.configuration.maximumWait)
                return .respond(response)
            },
        ]
    }

    private static func seed(of request: ServerRequest) -> Int? {
        request.queryValue("seed").flatMap { Int($0) }
    }

    /// `count` random bytes as httpbin draws them: with a seed, exactly the bytes httpbin sends.
    static func randomStream(count: Int, seed: Int?, chunkSize: Int, knownLength: Bool) -> BodyStream {
        var generator = seed.map(PythonRandom.init(seed:)) ?? PythonRandom()
        var remaining = max(0, count)
        return BodyStream(length: knownLength ? remaining : nil) { allocator in
            guard remaining > 0 else { return nil }
            let size = min(chunkSize, remaining)
            var buffer = allocator.buffer(capacity: size)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { pointer in
                for index in 0..<size { pointer[index] = generator.nextByte() }
                return size
            }
            remaining -= size
            return buffer
        }
    }

    /// `count` JSON lines, each the request description with an `id`, sent chunked.
    static func jsonLines(_ request: ServerRequest, count: Int) -> ServerResponse {
        guard case .object(var description) = RequestEcho.describe(request, [.url, .args, .headers, .origin]) else {
            return ServerResponse(status: .internalServerError)
        }
        var id = 0
        return ServerResponse(
            status: .ok,
            headers: [("Content-Type", "application/json")],
            body: .stream(
                BodyStream(length: nil) { allocator in
                    guard id < count else { return nil }
                    description["id"] = .int(id)
                    id += 1
                    return allocator.buffer(string: JSONValue.object(description).compact() + "\n")
                }
            )
        )
    }

    /// `/range/:n`: the `a`-`z` pattern, honouring `Range` and `If-Range`, paced by `duration`.
    static func range(_ request: ServerRequest, length: Int, maximumWait: TimeAmount) -> ServerResponse {
        let entityTag = "range\(length)"
        guard length > 0, length <= Routes.largestGeneratedBody else {
            var response = ServerResponse.text(
                "number of bytes must be in the range (0, \(Routes.largestGeneratedBody)]",
                contentType: StatusRoutes.plainText,
                status: .notFound
            )
            response.headers += [("ETag", entityTag), ("Accept-Ranges", "bytes")]
            return response
        }
        let chunkSize = Routes.chunkSize(request.queryInteger("chunk_size", default: 10 * 1024))
        let duration = min(.fromSeconds(request.queryNumber("duration", default: 0)), maximumWait)
        let resolution = ByteRange.resolve(
            range: request.headers.first(name: "range"),
            ifRange: request.headers.first(name: "if-range"),
            length: length,
            entityTag: entityTag
        )
        let (first, last): (Int, Int)
        switch resolution {
        case .unsatisfiable:
            return ServerResponse(
                status: .rangeNotSatisfiable,
                headers: [
                    ("ETag", entityTag), ("Accept-Ranges", "bytes"), ("Content-Range", "bytes */\(length)"),
                ]
            )
        case .full:
            (first, last) = (0, length - 1)
        case .partial(let start, let end):
            (first, last) = (start, end)
        }
        let chunkCount = (last - first + chunkSize) / chunkSize
        let interval = TimeAmount.nanoseconds(duration.nanoseconds / Int64(max(1, chunkCount)))
        return ServerResponse(
            status: resolution == .full ? .ok : .partialContent,
            headers: [
                ("Content-Type", "application/octet-stream"), ("ETag", entityTag), ("Accept-Ranges", "bytes"),
                ("Content-Range", "bytes \(first)-\(last)/\(length)"),
            ],
            body: .stream(ByteRange.patternStream(first...last, chunkSize: chunkSize, interval: interval))
        )
    }

    /// `/drip`: `numbytes` asterisks spread over `duration` seconds after `delay`, with status `code`.
    static func drip(_ request: ServerRequest, maximumWait: TimeAmount) -> ServerResponse {
        let count = min(request.queryInteger("numbytes", default: 10), Routes.largestGeneratedBody)
        guard count > 0 else {
            return .text("number of bytes must be positive", contentType: StatusRoutes.plainText, status: .badRequest)
        }
        let duration = min(.fromSeconds(request.queryNumber("duration", default: 2)), maximumWait)
        let code = request.queryInteger("code", default: 200)
        guard (100...999).contains(code) else {
            return .text("Invalid status code", contentType: StatusRoutes.plainText, status: .badRequest)
        }
        // At most 100 chunks a second, so large drips do not become a write per byte, and no
        // chunk over the cap, so a large drip stays in constant memory.
        let wantedChunks = max(1, min(count, Int(Double(duration.nanoseconds) / 10_000_000)))
        let chunkSize = Routes.chunkSize((count + wantedChunks - 1) / wantedChunks)
        let chunkCount = (count + chunkSize - 1) / chunkSize
        var remaining = count
        var response = ServerResponse(
            status: HTTPResponseStatus(statusCode: code),
            headers: [("Content-Type", "application/octet-stream")],
            body: .stream(
                BodyStream(
                    length: count,
                    interval: .nanoseconds(duration.nanoseconds / Int64(chunkCount))
                ) { allocator in
                    guard remaining > 0 else { return nil }
                    let size = min(chunkSize, remaining)
                    remaining -= size
                    return allocator.buffer(repeating: UInt8(ascii: "*"), count: size)
                }
            )
        )
        response.delay = min(.fromSeconds(request.queryNumber("delay", default: 0)), maximumWait)
        return response
    }
}

extension TimeAmount {
    /// A duration from seconds, at most `cap` (and 10⁹ s); negative or NaN values become zero,
    /// infinity the cap (as Python's `min(float("inf"), cap)`).
    static func fromSeconds(_ seconds: Double, cappedAt cap: Double = .greatestFiniteMagnitude) -> TimeAmount {
        guard !seconds.isNaN, seconds > 0 else { return .zero }
        return .nanoseconds(Int64(min(seconds, cap, 1e9) * 1e9))
    }
}
