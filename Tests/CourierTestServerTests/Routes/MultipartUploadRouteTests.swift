import AsyncHTTPClient
import CourierHashes
import NIOCore
import Testing

@testable import CourierTestServer

@Suite struct MultipartUploadRouteTests {
    private static func part(name: String, filename: String? = nil, contentType: String? = nil) -> [UInt8] {
        var disposition = "Content-Disposition: form-data; name=\"\(name)\""
        if let filename { disposition += "; filename=\"\(filename)\"" }
        var head = "\(disposition)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        return Array((head + "\r\n").utf8)
    }

    private static func summary(
        _ name: String,
        _ content: [UInt8],
        filename: String? = nil,
        contentType: String? = nil
    ) -> JSONValue {
        .object([
            "name": .string(name),
            "filename": filename.map(JSONValue.string) ?? .null,
            "contentType": contentType.map(JSONValue.string) ?? .null,
            "bytes": .int(content.count),
            "sha256": .string(SHA256.hexDigest(of: content)),
        ])
    }

    @Test func answersEachPartsLengthAndDigest() async throws {
        try await TestServer.withRunningServer { server in
            let file = [UInt8]((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 17) })
            var body = Array("--frontier\r\n".utf8) + Self.part(name: "title") + Array("Hello".utf8)
            body += Array("\r\n--frontier\r\n".utf8)
            body += Self.part(name: "upload", filename: "data.bin", contentType: "application/octet-stream") + file
            body += Array("\r\n--frontier--\r\n".utf8)
            let answer = try await Exchange.make(
                server.baseURL,
                "/upload/multipart",
                method: .POST,
                headers: [("Content-Type", "multipart/form-data; boundary=\"frontier\"")],
                body: body
            )
            #expect(answer.status == 200)
            #expect(answer.headers["Content-Type"] == ["application/json"])
            #expect(
                answer.json
                    == .object([
                        "bytes": .int(body.count),
                        "parts": .array([
                            Self.summary("title", Array("Hello".utf8)),
                            Self.summary(
                                "upload",
                                file,
                                filename: "data.bin",
                                contentType: "application/octet-stream"
                            ),
                        ]),
                    ])
            )
        }
    }

    @Test func streamsAPartLargerThanTheBufferedLimitInTinyAndLargeChunks() async throws {
        let configuration = TestServer.Configuration { $0.maximumRequestBodySize = 1024 }
        try await TestServer.withRunningServer(configuration: configuration) { server in
            let chunk = [UInt8]((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 13) })
            let chunkCount = 16
            let head = Array("--b\r\n".utf8) + Self.part(name: "big", filename: "big.bin")
            let tail = Array("\r\n--b--\r\n".utf8)
            var request = HTTPClientRequest(url: server.url("/upload/multipart").absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "multipart/form-data; boundary=b")
            request.body = .stream(
                AsyncStream<ByteBuffer> { continuation in
                    // The head and the tail go one byte at a time, so each delimiter is split.
                    for byte in head { continuation.yield(ByteBuffer(bytes: [byte])) }
                    for _ in 0..<chunkCount { continuation.yield(ByteBuffer(bytes: chunk)) }
                    for byte in tail { continuation.yield(ByteBuffer(bytes: [byte])) }
                    continuation.finish()
                },
                length: .unknown
            )
            let response = try await Exchange.client.execute(request, timeout: .seconds(60))
            #expect(response.status == .ok)
            let json = JSONValue.parse(Array(try await response.body.collect(upTo: 1024 * 1024).readableBytesView))
            var expected = SHA256()
            for _ in 0..<chunkCount { expected.update(chunk) }
            #expect(
                json
                    == .object([
                        "bytes": .int(head.count + chunk.count * chunkCount + tail.count),
                        "parts": .array([
                            .object([
                                "name": .string("big"),
                                "filename": .string("big.bin"),
                                "contentType": .null,
                                "bytes": .int(chunk.count * chunkCount),
                                "sha256": .string(expected.hexDigest()),
                            ])
                        ]),
                    ])
            )
        }
    }

    @Test(arguments: [
        (
            "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx",
            "closing boundary"
        ),
        ("multipart/form-data; boundary=b", "--b\r\nNo-Name: here\r\n\r\nx\r\n--b--\r\n", "no Content-Disposition"),
        ("multipart/form-data", "--b\r\n\r\n--b--\r\n", "no boundary"),
        ("application/json", "{}", "not multipart/form-data"),
        ("", "--b--\r\n", "not multipart/form-data"),
    ])
    func refusesAMalformedBodyWith400(contentType: String, body: String, reason: String) async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(
                server.baseURL,
                "/upload/multipart",
                method: .POST,
                headers: contentType.isEmpty ? [] : [("Content-Type", contentType)],
                body: Array(body.utf8)
            )
            #expect(answer.status == 400)
            #expect(answer.headers["Content-Type"] == ["application/json"])
            let message = answer.json?["error"]?.stringValue ?? ""
            #expect(message.contains(reason), "\(message)")
        }
    }

    @Test func answersOnlyPost() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(server.baseURL, "/upload/multipart")
            #expect(answer.status == 405)
        }
    }
}
