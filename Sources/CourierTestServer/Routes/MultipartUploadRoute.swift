import NIOCore
import NIOHTTP1

/// `POST /upload/multipart`: a sink that parses a `multipart/form-data` body as it streams in and
/// answers, for each part, its name, file name, content type, length and SHA-256:
///
/// ```json
/// {"bytes": 1234,
///  "parts": [{"name": "photo", "filename": "a.jpg", "contentType": "image/jpeg", "bytes": 1000, "sha256": "…"},
///            {"name": "title", "filename": null, "contentType": null, "bytes": 5, "sha256": "…"}]}
/// ```
///
/// `bytes` at the top is the length of the whole body. It holds no part in memory, so parts of any
/// size work. A body that is not `multipart/form-data` with a boundary, or that is malformed, gets
/// `400` and `{"error": "…"}`.
enum MultipartUploadRoute {
    static var routes: [Route] {
        [
            Route(
                "/upload/multipart",
                methods: [.POST],
                handler: .streaming { request, _ in
                    MultipartSink(contentType: request.headers.first(name: "content-type"))
                }
            )
        ]
    }

    /// Parses the body as it arrives, keeping only the summaries of the parts that have ended.
    ///
    /// Guarded by event-loop confinement: the connection feeds it on its event loop only.
    final class MultipartSink: RequestBodySink {
        /// `nil` once the body is known to be malformed, or when the request has no boundary.
        private var parser: MultipartParser?
        private var failure: MultipartParser.Malformed?
        private var parts: [MultipartParser.PartSummary] = []
        private var byteCount = 0

        init(contentType: String?) {
            switch Self.boundary(in: contentType) {
            case .success(let boundary): parser = MultipartParser(boundary: boundary)
            case .failure(let malformed): failure = malformed
            }
        }

        func consume(_ chunk: ByteBuffer) -> BodySinkVerdict {
            byteCount += chunk.readableBytes
            // Taken out while it runs, so its buffers are not copied on write.
            guard var parser else { return .keepReading }
            self.parser = nil
            let action = chunk.withUnsafeReadableBytes { parser.consume($0) }
            switch action {
            case .continueReading(let endedParts):
                parts.append(contentsOf: endedParts)
                self.parser = parser
            case .fail(let malformed):
                failure = malformed
            }
            return .keepReading
        }

        func finish() -> RouteOutcome {
            if var parser, case .fail(let malformed) = parser.finish() { failure = malformed }
            if let failure {
                return .respond(.json(.object(["error": .string(failure.reason)]), status: .badRequest))
            }
            let summaries: [JSONValue] = parts.map { part in
                .object([
                    "name": .string(part.name),
                    "filename": part.filename.map(JSONValue.string) ?? .null,
                    "contentType": part.contentType.map(JSONValue.string) ?? .null,
                    "bytes": .int(part.bytes),
                    "sha256": .string(part.sha256),
                ])
            }
            return .respond(.json(.object(["parts": .array(summaries), "bytes": .int(byteCount)])))
        }

        /// The `boundary` parameter of a `multipart/form-data` content type.
        static func boundary(in contentType: String?) -> Result<String, MultipartParser.Malformed> {
            guard let contentType,
                contentType.split(separator: ";").first?.trimmingSpaces().lowercased() == "multipart/form-data"
            else {
                return .failure(MultipartParser.Malformed(reason: "the body is not multipart/form-data"))
            }
            guard let boundary = FormDecoding.headerParameter("boundary", in: contentType),
                (1...70).contains(boundary.utf8.count)
            else {
                return .failure(
                    MultipartParser.Malformed(reason: "the Content-Type has no boundary of 1 to 70 characters")
                )
            }
            return .success(boundary)
        }
    }
}
