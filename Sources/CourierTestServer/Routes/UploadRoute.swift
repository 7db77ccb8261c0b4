import NIOCore
import NIOHTTP1

/// `/upload`: a sink that streams the request body, counting and hashing it, and answers
/// `{"bytes": n, "sha256": "…"}`. It holds no body in memory, so uploads of any size work.
enum UploadRoute {
    static var routes: [Route] {
        [Route("/upload", methods: [.POST, .PUT, .PATCH], handler: .streaming { _, _ in UploadSink() })]
    }

    /// Counts and hashes the body as it arrives.
    ///
    /// Guarded by event-loop confinement: the connection feeds it on its event loop only.
    final class UploadSink: RequestBodySink {
        private var hasher = SHA256()
        private var byteCount = 0

        func consume(_ chunk: ByteBuffer) {
            byteCount += chunk.readableBytes
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        }

        func finish() -> RouteOutcome {
            .respond(.json(.object(["bytes": .int(byteCount), "sha256": .string(hasher.hexDigest())])))
        }
    }
}
