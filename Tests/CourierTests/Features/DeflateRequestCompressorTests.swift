import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `DeflateRequestCompressor`, as Alamofire's: in-memory bodies sent deflated with
/// `Content-Encoding: deflate`, checked by the test server inflating what it received.
@Suite struct DeflateRequestCompressorTests {
    /// `/inflate`'s echo: the body the server inflated, and what arrived on the wire.
    struct Echo: Decodable {
        var data: String
        var headers: [String: String]
        var compressedLength: Int?
        var json: [String: String]?
    }

    /// `/anything`'s echo of a body sent as it was.
    struct PlainEcho: Decodable {
        var data: String
        var headers: [String: String]
    }

    @Test(arguments: TransportKind.allCases)
    func compressesParametersAndLabelsThem(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: .deflateCompressor)
            let text = String(repeating: "courier ", count: 4_000)
            let echo = try await session.request(
                server.url("/inflate"),
                method: .post,
                parameters: ["text": text],
                encoder: .json
            ).validate().serializingDecodable(Echo.self).value
            #expect(echo.json == ["text": text])
            #expect(echo.headers["Content-Encoding"] == "deflate")
            let sent = try #require(echo.compressedLength)
            #expect(sent > 0 && sent < text.utf8.count / 10)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func compressesBodiesLargerThanOneOutputChunk(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: .deflateCompressor)
            // Random-looking lines compress poorly, so the output spans many of zlib's chunks.
            var generator = SplitMix64(seed: 7)
            let lines = (0..<40_000).map { _ in String(generator.next(), radix: 36) }
            let body = lines.joined(separator: "\n")
            var request = URLRequest(url: server.url("/inflate"))
            request.method = .put
            request.httpBody = Data(body.utf8)
            let echo = try await session.request(request).validate().serializingDecodable(Echo.self).value
            #expect(echo.data == body)
            #expect((echo.compressedLength ?? 0) > 64 * 1024)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func leavesRequestsWithoutABodyInMemoryAlone(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: .deflateCompressor)
            let get = try await session.request(server.url("/anything")).validate()
                .serializingDecodable(PlainEcho.self).value
            #expect(get.headers["Content-Encoding"] == nil)

            // An upload's body is not `httpBody`: sent as it is, as in Alamofire.
            let upload = try await session.upload(Data("plain".utf8), to: server.url("/anything"), method: .post)
                .validate().serializingDecodable(PlainEcho.self).value
            #expect(upload.data == "plain")
            #expect(upload.headers["Content-Encoding"] == nil)

            // Nor is a body left in the URLRequest an upload is made with: it is not what is sent.
            var leftover = URLRequest(url: server.url("/anything"))
            leftover.method = .post
            leftover.httpBody = Data("ignored".utf8)
            let sent = try await session.upload(.data(Data("sent".utf8)), with: leftover)
                .validate().serializingDecodable(PlainEcho.self).value
            #expect(sent.data == "sent")
            #expect(sent.headers["Content-Encoding"] == nil)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func asksWhetherToCompressEachBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let compressor = DeflateRequestCompressor(shouldCompressBodyData: { $0.count >= 1_024 })
            let session = transport.makeSession(interceptor: compressor)
            let small = try await session.request(
                server.url("/anything"),
                method: .post,
                parameters: ["a": "b"],
                encoder: .json
            ).validate().serializingDecodable(PlainEcho.self).value
            #expect(small.data == #"{"a":"b"}"#)
            #expect(small.headers["Content-Encoding"] == nil)

            let large = try await session.request(
                server.url("/inflate"),
                method: .post,
                parameters: ["a": String(repeating: "b", count: 2_000)],
                encoder: .json
            ).validate().serializingDecodable(Echo.self).value
            #expect(large.headers["Content-Encoding"] == "deflate")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anExistingContentEncodingFailsSkipsOrIsReplaced(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var request = URLRequest(url: server.url("/anything"))
            request.method = .post
            request.httpBody = Data("already".utf8)
            request.headers.add(.contentEncoding("identity"))

            let refused = await session.request(request, interceptor: .deflateCompressor).serializingData().response
            let error = try #require(refused.result.failure)
            #expect(error.kind == .requestAdaptationFailed)
            #expect(error.underlyingError is DeflateRequestCompressor.DuplicateHeaderError)
            // Nothing was sent.
            #expect(refused.response == nil)
            #expect(refused.metrics == nil)

            let skipped = try await session.request(
                request,
                interceptor: .deflateCompressor(duplicateHeaderBehavior: .skip)
            ).validate().serializingDecodable(PlainEcho.self).value
            #expect(skipped.data == "already")
            #expect(skipped.headers["Content-Encoding"] == "identity")

            request.url = server.url("/inflate")
            let replaced = try await session.request(
                request,
                interceptor: .deflateCompressor(duplicateHeaderBehavior: .replace)
            ).validate().serializingDecodable(Echo.self).value
            #expect(replaced.data == "already")
            #expect(replaced.headers["Content-Encoding"] == "deflate")
            await session.invalidate()
        }
    }

    @Test func anEmptyBodyBecomesAnEmptyZlibStream() throws {
        let compressed = try DeflateRequestCompressor.deflate(Data())
        // A zlib header, an empty final block and the Adler-32 of nothing (1).
        #expect(compressed.count == 8)
        #expect(compressed.first == 0x78)
        #expect(Array(compressed.suffix(4)) == [0, 0, 0, 1])
    }
}
