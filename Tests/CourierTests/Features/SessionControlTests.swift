import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's session-wide controls and interceptor shorthands: `cancelAllRequests`,
/// `withAllRequests`, `.retryPolicy`, `.adapter { }`, a `RequestAdapterState` of your own.
@Suite struct SessionControlTests {
    @Test(arguments: TransportKind.allCases)
    func cancelAllRequestsCancelsWhatRunsAndLeavesTheSessionUsable(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let hanging = (0..<3).map { _ in session.request(server.url("/fault/hang")).serializingData() }
            try await server.waitForRequests(3)
            var seen = 0
            session.withAllRequests { seen = $0.count }
            #expect(seen == 3)
            await withCheckedContinuation { continuation in
                session.cancelAllRequests { continuation.resume() }
            }
            for task in hanging {
                let error = await value(within: hangLimit) { await task.result }
                #expect(error?.failure?.isExplicitlyCancelledError == true)
            }
            // Finished requests leave the registry; new ones still run.
            let after = await value(within: hangLimit) { () -> Int in
                var count = -1
                session.withAllRequests { count = $0.count }
                return count
            }
            #expect(after == 0)
            _ = try await session.request(server.url("/get")).validate().serializingData().value
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func interceptorShorthandsWork(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let key = UUID().uuidString
            let response = await session.request(
                server.url("/fault/flaky/\(key)?times=1&status=503"),
                interceptor: .retryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01)
            ).validate().serializingData().response
            #expect(response.result.failure == nil)
            #expect(response.metrics?.statusCode == 200)

            let adapted = try await session.request(
                server.url("/headers"),
                interceptor: Interceptor(
                    adapters: [
                        .adapter { request, _ in
                            var request = request
                            request.setValue("yes", forHTTPHeaderField: "X-Adapted")
                            return request
                        }
                    ],
                    retriers: [.retrier { _, _, _ in .doNotRetry }]
                )
            ).validate().serializingString().value
            #expect(adapted.contains("X-Adapted"))
            await session.invalidate()
        }
    }

    @Test func anAdapterStateCanBeMadeForCallingAnAdapterYourself() async throws {
        let session = Session()
        let id = UUID()
        let state = RequestAdapterState(requestID: id, retryCount: 2, session: session)
        #expect(state.requestID == id && state.retryCount == 2 && state.session === session)
        let adapter = Adapter { request, _ in request }
        let url = try #require(URL(string: "http://127.0.0.1/"))
        #expect(try await adapter.adapt(URLRequest(url: url), using: state).url == url)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func withoutAutomaticCancellingATaskCancelLeavesTheRequestRunning(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let data = session.request(server.url("/delay/0.5")).serializingData(automaticallyCancelling: false)
            let download = session.download(server.url("/delay/0.5"))
                .serializingDownloadedFileURL(automaticallyCancelling: false)
            let awaitingData = Task { await data.result }
            let awaitingDownload = Task { await download.result }
            try await server.waitForRequests(2)
            awaitingData.cancel()
            awaitingDownload.cancel()
            let dataResult = await value(within: hangLimit) { await awaitingData.value }
            #expect((try? dataResult?.get())?.isEmpty == false, "the request finished as if nobody had cancelled")
            let downloadResult = await value(within: hangLimit) { await awaitingDownload.value }
            let fileURL = try #require(try downloadResult?.get())
            try? FileManager.default.removeItem(at: fileURL)

            // The default cancels with the task.
            let cancelling = session.request(server.url("/fault/hang")).serializingData()
            let awaiting = Task { await cancelling.result }
            try await server.waitForRequests(3)
            awaiting.cancel()
            let cancelled = await value(within: hangLimit) { await awaiting.value }
            #expect(cancelled?.failure?.isExplicitlyCancelledError == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamLoopLeftWithoutAutomaticCancellingLetsOtherConsumersFinish(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/stream-bytes/200000?chunk_size=1000"))
            let total = Protected(0)
            // Added before the loop starts the request: a consumer sees what arrives after it.
            let (ends, end) = AsyncStream<CourierError?>.makeStream()
            request.responseStream { stream in
                switch stream.event {
                case .stream(.success(let data)): total.withLock { $0 += data.count }
                case .complete(let completion): end.yield(completion.error)
                }
            }
            let handled = Task { () -> CourierError?? in
                for await error in ends { return error }
                return nil
            }
            // A small buffer that fills: had the loop left it holding the transfer back, the
            // handler above would never see the end.
            for try await _ in request.streamingData(automaticallyCancelling: false, bufferLimit: 1) { break }
            let ended = await value(within: hangLimit) { () -> String in
                switch await handled.value {
                case .some(.none): return "ok"
                case .some(.some(let error)): return "failed: \(error)"
                case .none: return "no end"
                }
            }
            #expect(ended == "ok")
            #expect(total.withLock { $0 } == 200_000)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aGETWithABodyIsRefusedBeforeSending(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let encoded = await session.request(
                server.url("/anything"),
                parameters: ["secret": "s3cret"],
                encoding: URLEncoding.httpBody
            ).serializingData().result
            let error = try #require(encoded.failure)
            #expect(error.kind == .urlRequestValidationFailed)
            guard case .bodyDataInGETRequest(let body)? = error.urlRequestValidationFailureReason else {
                Issue.record("expected bodyDataInGETRequest, got \(error)")
                return
            }
            #expect(body == Data("secret=s3cret".utf8))
            #expect(error.errorDescription?.contains("s3cret") == false, "the body stays out of the message")

            let key = UUID().uuidString
            let counted = server.url("/fault/flaky/\(key)?times=0")
            let modified = await session.request(counted) { $0.httpBody = Data("x".utf8) }.serializingData().result
            #expect(modified.failure?.kind == .urlRequestValidationFailed)
            #expect(server.attempts(forKey: key) == 0, "nothing was sent")

            // Allowed by the configuration, it goes out.
            let allowing = transport.makeSession { $0.allowsBodyInGETRequests = true }
            let echoed = await allowing.request(server.url("/anything")) { $0.httpBody = Data("x=1".utf8) }
                .validate().serializingString().result
            switch (transport, echoed) {
            case (.asyncHTTPClient, .success(let text)):
                #expect(text.contains("x=1"))
            case (.urlSession, .failure(let error)) where TransportKind.urlSessionIsFoundationNetworking:
                // FoundationNetworking's libcurl refuses a GET body ("resource exceeds maximum
                // size"): the request got past Courier's check and reached the transport.
                #expect(error.kind == .transportFailed)
            case (.urlSession, .success(let text)):
                #expect(text.contains("x=1"))
            default:
                Issue.record("unexpected: \(echoed)")
            }
            await allowing.invalidate()

            // The same body on a POST goes out.
            _ = try await session.request(counted, method: .post) { $0.httpBody = Data("x".utf8) }
                .validate().serializingData().value
            #expect(server.attempts(forKey: key) == 1)
            await session.invalidate()
        }
    }
}
