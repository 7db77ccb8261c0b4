import AsyncHTTPClient
import CourierHashes
import NIOCore
import Testing

@testable import CourierTestServer

@Suite struct UploadRouteTests {
    @Test func countsAndHashesTheBody() async throws {
        try await TestServer.withRunningServer { server in
            let body = Array("hello, upload".utf8)
            let answer = try await Exchange.make(server.baseURL, "/upload", method: .POST, body: body)
            #expect(answer.json == .object(["bytes": .int(body.count), "sha256": .string(SHA256.hexDigest(of: body))]))
            let empty = try await Exchange.make(server.baseURL, "/upload", method: .PUT, body: [])
            #expect(
                empty.json?["sha256"] == .string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
            )
        }
    }

    @Test func streamsAChunkedBodyLargerThanTheBufferedLimit() async throws {
        let configuration = TestServer.Configuration { $0.maximumRequestBodySize = 1024 }
        try await TestServer.withRunningServer(configuration: configuration) { server in
            let chunk = [UInt8]((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let chunkCount = 32
            var request = HTTPClientRequest(url: server.url("/upload").absoluteString)
            request.method = .POST
            request.body = .stream(
                AsyncStream<ByteBuffer> { continuation in
                    for _ in 0..<chunkCount { continuation.yield(ByteBuffer(bytes: chunk)) }
                    continuation.finish()
                },
                length: .unknown
            )
            let response = try await Exchange.client.execute(request, timeout: .seconds(30))
            let json = JSONValue.parse(Array(try await response.body.collect(upTo: 1024).readableBytesView))
            var expected = SHA256()
            for _ in 0..<chunkCount { expected.update(chunk) }
            #expect(
                json == .object(["bytes": .int(chunk.count * chunkCount), "sha256": .string(expected.hexDigest())])
            )
        }
    }

    @Test func bufferedRoutesRefuseBodiesOverTheLimit() async throws {
        let configuration = TestServer.Configuration { $0.maximumRequestBodySize = 1024 }
        try await TestServer.withRunningServer(configuration: configuration) { server in
            let answer = try await Exchange.make(
                server.baseURL,
                "/post",
                method: .POST,
                body: [UInt8](repeating: 1, count: 4096)
            )
            #expect(answer.status == 413)
            #expect(answer.headers["Connection"] == ["close"])
        }
    }
}
