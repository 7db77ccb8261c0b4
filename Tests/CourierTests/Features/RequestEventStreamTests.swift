import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's async event streams (`urlRequests()`, `cURLDescriptions()`, `httpResponses()`,
/// progress) and 5.11's per-request modifiers (`interceptor(_:)`, `adapt(using:)`, `retry(using:)`).
@Suite struct RequestEventStreamTests {
    /// Collects a stream's elements until it ends, within the test's bound.
    private func collect<Element: Sendable>(_ stream: AsyncStream<Element>) async -> [Element]? {
        await value(within: hangLimit) {
            var elements: [Element] = []
            for await element in stream { elements.append(element) }
            return elements
        }
    }

    @Test(arguments: TransportKind.allCases)
    func eachAttemptsRequestAndResponseStreamInOrderThenEnd(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let key = UUID().uuidString
            let request = session.request(
                server.url("/fault/flaky/\(key)?times=1&status=503"),
                interceptor: .retryPolicy(exponentialBackoffScale: 0.01)
            )
            let urlRequests = request.urlRequests()
            let responses = request.httpResponses()
            let cURLs = request.cURLDescriptions()
            _ = try await request.validate().serializingData().value
            let sent = try #require(await collect(urlRequests), "the stream ended with the request")
            #expect(sent.map(\.url) == [request.firstRequest?.url, request.lastRequest?.url])
            let statuses = try #require(await collect(responses))
            #expect(statuses.map(\.statusCode) == [503, 200])
            let commands = try #require(await collect(cURLs))
            #expect(commands.count == 1)
            #expect(commands.first?.contains("curl -v") == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamOfAFinishedRequestEndsAtOnce(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/get"))
            _ = try await request.validate().serializingData().value
            let sent = try #require(await collect(request.urlRequests()))
            #expect(sent.count == 1, "the last request, then the end")
            let responses = try #require(await collect(request.httpResponses()))
            #expect(responses.isEmpty)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFailedAdaptationStillDescribesTheRequest(transport: TransportKind) async throws {
        struct Refused: Error {}
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/get"), interceptor: Adapter { _, _ in throw Refused() })
            let commands = request.cURLDescriptions()
            _ = await request.serializingData().result
            let described = try #require(await collect(commands))
            #expect(described.count == 1, "Alamofire's cURL handler runs for the unadapted request")
            #expect(described.first?.contains("/get") == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamRequestsStreamTheirResponsesToo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/stream/3"))
            let responses = request.httpResponses()
            for try await _ in request.validate().streamingData() {}
            let heads = try #require(await collect(responses))
            #expect(heads.map(\.statusCode) == [200])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func progressStreamsUnderAlamofiresNames(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.upload(Data(count: 200_000), to: server.url("/upload?hash=false"))
            let sent = request.uploadProgress()
            let received = request.downloadProgress()
            _ = try await request.validate().serializingData().value
            let up = try #require(await collect(sent))
            #expect(up.last?.fractionCompleted == 1)
            let down = try #require(await collect(received))
            #expect(down.last?.fractionCompleted == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func perRequestModifiersAdaptAndRetryAfterTheOwnInterceptor(transport: TransportKind) async throws {
        struct Headers: Decodable {
            var headers: [String: String]
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                interceptor: Adapter { request, _ in
                    var request = request
                    request.headers.add(name: "X-Order", value: (request.headers["X-Order"] ?? "") + "session")
                    return request
                }
            )
            let stamp: @Sendable (String) -> Adapter = { name in
                Adapter { request, _ in
                    var request = request
                    request.headers.add(name: "X-Order", value: (request.headers["X-Order"] ?? "") + name + ",")
                    return request
                }
            }
            let request = session.request(server.url("/headers"), interceptor: stamp("own"))
                .adapt(using: stamp("added"))
                .interceptor(stamp("interceptor"))
            let echo = try await request.validate().serializingDecodable(Headers.self).value
            #expect(echo.headers["X-Order"] == "own,added,interceptor,session")

            // A retrier added to the request decides, after the one it was made with.
            let asked = TestLock<[String]>([])
            let key = UUID().uuidString
            let retried = session.request(
                server.url("/fault/flaky/\(key)?times=1&status=503"),
                interceptor: Retrier { _, _, _ in
                    asked.withLock { $0.append("own") }
                    return .doNotRetry
                }
            ).retry(
                using: Retrier { _, _, _ in
                    asked.withLock { $0.append("added") }
                    return .retry
                }
            )
            _ = try await retried.validate().serializingData().value
            #expect(asked.withLock { $0 } == ["own", "added"])
            #expect(retried.retryCount == 1)
            await session.invalidate()
        }
    }
}
