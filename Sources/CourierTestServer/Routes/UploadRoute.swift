import CourierHashes
import NIOCore
import NIOHTTP1

/// `/upload`: a sink that streams the request body, counting and hashing it, and answers
/// `{"bytes": n, "sha256": "…"}`. It holds no body in memory, so uploads of any size work. With
/// `?hash=false` it only counts (`"sha256": null`), so a benchmark measures the client, not SHA-256.
enum UploadRoute {
    static var routes: [Route] {
        [
            Route(
                "/upload",
                methods: [.POST, .PUT, .PATCH],
                handler: .streaming { request, _ in
                    UploadSink(hashes: request.queryValue("hash") != "false")
                }
            )
        ]
    }

    /// Counts and hashes the body as it arrives.
    ///
    /// Guarded by event-loop confinement: the connection feeds it on its event loop only.
    final class UploadSink: RequestBodySink {
        private var hasher: SHA256?
        private var byteCount = 0

        init(hashes: Bool) {
            hasher = hashes ? SHA256() : nil
        }

        func consume(_ chunk: ByteBuffer) -> BodySinkVerdict {
            byteCount += chunk.readableBytes
            if hasher != nil { chunk.withUnsafeReadableBytes { hasher?.update(bufferPointer: $0) } }
            return .keepReading
        }

        func finish() -> RouteOutcome {
            let digest: JSONValue = hasher.map { .string($0.hexDigest()) } ?? .null
            return .respond(.json(.object(["bytes": .int(byteCount), "sha256": digest])))
        }
    }
}
