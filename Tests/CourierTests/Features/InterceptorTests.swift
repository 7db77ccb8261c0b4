import Courier
import CourierTestServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adds `name: value` to each attempt, appending to any value already there, so a test can tell
/// whether an adapter saw the original request or an already adapted one.
private struct AppendingAdapter: RequestInterceptor {
    let name: String
    let value: String

    func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
        var request = urlRequest
        let existing = request.value(forHTTPHeaderField: name).map { $0 + "," } ?? ""
        request.setValue(existing + value, forHTTPHeaderField: name)
        return request
    }
}

/// Retries up to `limit` times, optionally after `delay`, and counts how often it was asked.
private struct CountingRetrier: RequestRetrier {
    let limit: Int
    var delay: TimeInterval = 0
    let asked = AsyncStream<CourierError>.makeStream()

    func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        asked.continuation.yield(error)
        guard request.retryCount < limit else { return .doNotRetry }
        return delay > 0 ? .retryWithDelay(delay) : .retry
    }
}

private struct AdapterFailure: Error, Equatable {}

/// The body of `/fault/flaky/:key`.
private struct Attempts: Decodable, Sendable {
    let attempts: Int
}

@Suite struct InterceptorTests {
    @Test(arguments: TransportKind.allCases)
    func failedStatusIsRetriedUntilItSucceeds(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Interceptor(retriers: [CountingRetrier(limit: 3)]))
            let request = session.request(server.url("/fault/flaky/status503?times=2&status=503")).validate()
            let response = await request.serializingDecodable(Attempts.self).response
            #expect(response.value?.attempts == 3)
            #expect(request.retryCount == 2)
            #expect(request.requests.count == 3)
            #expect(request.performedRequests.count == 3)
            #expect(request.allMetrics.map(\.statusCode) == [503, 503, 200])
            #expect(request.error == nil)
            #expect(server.attempts(forKey: "status503") == 3)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func retriesStopAtTheRetriersLimit(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let retrier = CountingRetrier(limit: 1)
            let session = transport.makeSession(interceptor: Interceptor(retriers: [retrier]))
            let request = session.request(server.url("/fault/flaky/limit?times=5&status=500")).validate()
            let error = await request.serializingData().result.failure
            #expect(error?.responseCode == 500)
            #expect(request.retryCount == 1)
            #expect(server.attempts(forKey: "limit") == 2)
            retrier.asked.continuation.finish()
            var askedCount = 0
            for await _ in retrier.asked.stream { askedCount += 1 }
            #expect(askedCount == 2, "asked after each failed attempt")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func droppedConnectionsAreRetried(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                interceptor: Retrier { request, _, error in
                    request.retryCount < 2 && error.urlError?.code == .networkConnectionLost ? .retry : .doNotRetry
                }
            )
            let request = session.request(server.url("/fault/flaky/drop?times=1&fault=drop"))
            let response = await request.serializingDecodable(Attempts.self).response
            #expect(response.value?.attempts == 2)
            #expect(request.retryCount == 1)
            #expect(request.allMetrics.count == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func everyAttemptAdaptsTheOriginalRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let adapter = Adapter { request, _ in
                var request = request
                let attempt = (request.value(forHTTPHeaderField: "X-Chain") ?? "") + "a"
                request.setValue(attempt, forHTTPHeaderField: "X-Chain")
                return request
            }
            let session = transport.makeSession(
                interceptor: Interceptor(adapters: [adapter], retriers: [CountingRetrier(limit: 2)])
            )
            let request = session.request(server.url("/fault/flaky/adapt?times=2&status=503")).validate()
            _ = await request.serializingData().result
            let chains = request.requests.map { $0.value(forHTTPHeaderField: "X-Chain") }
            #expect(chains == ["a", "a", "a"], "each attempt starts from the caller's request")
            #expect(request.performedRequests == request.requests)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func adapterStateCountsRetries(transport: TransportKind) async throws {
        struct AttemptAdapter: RequestAdapter {
            func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest { urlRequest }
            func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState) async throws -> URLRequest {
                var request = urlRequest
                request.setValue("\(state.retryCount)", forHTTPHeaderField: "X-Attempt")
                return request
            }
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                interceptor: Interceptor(adapters: [AttemptAdapter()], retriers: [CountingRetrier(limit: 1)])
            )
            let request = session.request(server.url("/fault/flaky/state?times=1")).validate()
            let echo = try await request.serializingDecodable(Attempts.self).value
            #expect(echo.attempts == 2)
            #expect(request.requests.map { $0.value(forHTTPHeaderField: "X-Attempt") } == ["0", "1"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func requestInterceptorRunsBeforeTheSessions(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                interceptor: Interceptor(adapters: [
                    AppendingAdapter(name: "X-Order", value: "session")
                ])
            )
            let echo = try await session.request(
                server.url("/headers"),
                interceptor: Interceptor(adapters: [AppendingAdapter(name: "X-Order", value: "request")])
            )
            .serializingDecodable([String: [String: String]].self).value
            #expect(echo["headers"]?["X-Order"] == "request,session")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func adapterErrorsFailTheRequestBeforeAnythingIsSent(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Adapter { _, _ in throw AdapterFailure() })
            let request = session.request(server.url("/get"))
            let error = await request.serializingData().result.failure
            #expect(error?.kind == .requestAdaptationFailed)
            #expect(error?.underlyingError as? AdapterFailure == AdapterFailure())
            // The request as built is recorded, as in Alamofire; nothing was handed to the transport.
            #expect(request.requests.map(\.url) == [server.url("/get")])
            #expect(request.performedRequests.isEmpty)
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func adaptersCannotSmuggleHeaders(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: AppendingAdapter(name: "X-Evil", value: "a\r\nB: c"))
            let result = await session.request(server.url("/headers"))
                .serializingDecodable([String: [String: String]].self).result
            switch result {
            case .success(let echo):
                // Foundation drops a header value with a line break when it is set on a URLRequest.
                #expect(echo["headers"]?["B"] == nil)
                #expect(echo["headers"]?["X-Evil"] == nil)
            case .failure(let error):
                #expect(error.kind == .invalidHeader)
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func retrierErrorsKeepTheOriginalError(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                interceptor: Retrier { _, _, _ in .doNotRetryWithError(AdapterFailure()) }
            )
            let request = session.request(server.url("/status/503")).validate()
            let error = await request.serializingData().result.failure
            #expect(error?.kind == .requestRetryFailed)
            #expect(error?.underlyingError as? AdapterFailure == AdapterFailure())
            #expect(request.retryCount == 0)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func firstRetrierThatDecidesWins(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let interceptor = Interceptor(retriers: [
                Retrier { _, _, _ in .doNotRetry },
                Retrier { request, _, _ in request.retryCount == 0 ? .retry : .doNotRetry },
                Retrier { _, _, _ in .doNotRetryWithError(AdapterFailure()) },
            ])
            let session = transport.makeSession(interceptor: interceptor)
            let request = session.request(server.url("/fault/flaky/order?times=1&status=500")).validate()
            _ = await request.serializingData().result
            #expect(request.retryCount == 1)
            #expect(request.error == nil)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingDuringTheRetryDelayEndsTheRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let retrier = CountingRetrier(limit: 1, delay: 60)
            let session = transport.makeSession(interceptor: Interceptor(retriers: [retrier]))
            let request = session.request(server.url("/status/503")).validate()
            let result = Task { await request.serializingData().result }
            var asked = retrier.asked.stream.makeAsyncIterator()
            #expect(await asked.next()?.responseCode == 503)
            request.cancel()
            #expect(await result.value.failure?.isExplicitlyCancelledError == true)
            #expect(request.retryCount == 0)
            #expect(request.error?.isExplicitlyCancelledError == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingDuringAdaptationSendsNothing(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
            let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
            let adapter = Adapter { urlRequest, _ in
                enteredContinuation.yield()
                for await _ in release { break }
                return urlRequest
            }
            let session = transport.makeSession(interceptor: adapter)
            let request = session.request(server.url("/get"))
            let result = Task { await request.serializingData().result }
            var iterator = entered.makeAsyncIterator()
            await iterator.next()
            request.cancel()
            releaseContinuation.yield()
            #expect(await result.value.failure?.isExplicitlyCancelledError == true)
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            #expect(request.performedRequests.isEmpty)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func monitorsSeeAdaptationAndRetries(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let monitor = RecordingMonitor()
            let session = transport.makeSession(
                interceptor: Interceptor(
                    adapters: [AppendingAdapter(name: "X-A", value: "1")],
                    retriers: [CountingRetrier(limit: 1)]
                ),
                eventMonitors: [monitor]
            )
            _ = await session.request(server.url("/fault/flaky/monitor?times=1&status=503")).validate()
                .serializingData().result
            var iterator = monitor.parsed.stream.makeAsyncIterator()
            let attempt = ["adapted", "urlRequest", "attemptStarted", "response", "attemptCompleted"]
            let expected =
                ["created", "resumed"] + attempt + ["validationFailed", "retrying"] + attempt
                + ["validated", "finished", "parsed"]
            #expect(await iterator.next() == expected)
            await session.invalidate()
        }
    }
}
