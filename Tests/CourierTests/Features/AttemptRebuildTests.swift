import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's attempt behaviour: each attempt is built afresh from the caller's parameters, an
/// adapter's failure is always `requestAdaptationFailed`, and a body without a `Content-Type`
/// goes out unlabelled on every transport.
@Suite struct AttemptRebuildTests {
    /// A URLRequest convertible that counts its builds and stamps each into a header.
    struct CountingConvertible: URLRequestConvertible {
        let url: URL
        let builds = TestLock(0)

        func asURLRequest() throws -> URLRequest {
            let build = builds.withLock { count -> Int in
                count += 1
                return count
            }
            var request = URLRequest(url: url)
            request.setValue("\(build)", forHTTPHeaderField: "X-Build")
            return request
        }
    }

    struct Echo: Decodable {
        var headers: [String: String]
        var data: String?
    }

    @Test(arguments: TransportKind.allCases)
    func aRetryBuildsItsRequestAgainFromTheConvertible(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let initialRequests = TestLock<[URLRequest]>([])
            let monitor = ClosureEventMonitor()
            monitor.requestDidCreateInitialURLRequest = { _, request in initialRequests.withLock { $0.append(request) }
            }
            let session = transport.makeSession(eventMonitors: [monitor])
            let key = UUID().uuidString
            let convertible = CountingConvertible(url: server.url("/fault/flaky/\(key)?times=1&status=503"))
            let request = session.request(convertible, interceptor: .retryPolicy(exponentialBackoffScale: 0.01))
            let response = await request.validate().serializingData().response
            #expect(response.result.failure == nil)
            #expect(convertible.builds.withLock { $0 } == 2)
            #expect(request.performedRequests.map { $0.value(forHTTPHeaderField: "X-Build") } == ["1", "2"])
            #expect(initialRequests.withLock { $0.map { $0.value(forHTTPHeaderField: "X-Build") } } == ["1", "2"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRetryRunsTheRequestModifierAgain(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let key = UUID().uuidString
            let runs = TestLock(0)
            let request = session.request(
                server.url("/fault/flaky/\(key)?times=1&status=503"),
                interceptor: .retryPolicy(exponentialBackoffScale: 0.01),
                requestModifier: { urlRequest in
                    let run = runs.withLock { count -> Int in
                        count += 1
                        return count
                    }
                    urlRequest.setValue("\(run)", forHTTPHeaderField: "X-Run")
                }
            )
            _ = try await request.validate().serializingData().value
            #expect(runs.withLock { $0 } == 2)
            #expect(request.performedRequests.map { $0.value(forHTTPHeaderField: "X-Run") } == ["1", "2"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anAdapterThrowingACourierErrorStillFailsAdaptation(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let adapter = Adapter { request, _ in
                _ = request
                throw CourierError.explicitlyCancelled
            }
            let response = await session.request(
                server.url("/get"),
                headers: ["X-Mine": "1"],
                interceptor: adapter
            ).serializingData().response
            let error = try #require(response.result.failure)
            #expect(error.kind == .requestAdaptationFailed)
            #expect((error.underlyingError as? CourierError)?.isExplicitlyCancelledError == true)
            // The request as built, before the adapter: what Alamofire reports too.
            #expect(response.request?.url == server.url("/get"))
            #expect(response.request?.value(forHTTPHeaderField: "X-Mine") == "1")
            #expect(response.response == nil)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyWithoutContentTypeGoesOutUnlabelled(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let uploaded = try await session.upload(Data("a=b".utf8), to: server.url("/anything"))
                .validate().serializingDecodable(Echo.self).value
            #expect(uploaded.data == "a=b")
            #expect(uploaded.headers["Content-Type"] == nil)

            var request = URLRequest(url: server.url("/anything"))
            request.method = .put
            request.httpBody = Data("c=d".utf8)
            let sent = try await session.request(request).validate().serializingDecodable(Echo.self).value
            #expect(sent.data == "c=d")
            #expect(sent.headers["Content-Type"] == nil)

            // A label the caller gives is kept.
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            let labelled = try await session.request(request).validate().serializingDecodable(Echo.self).value
            #expect(labelled.headers["Content-Type"] == "application/x-www-form-urlencoded")
            #expect(labelled.data == "")
            await session.invalidate()
        }
    }
}
