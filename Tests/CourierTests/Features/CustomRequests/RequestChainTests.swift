import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `chained(whenCompleted:)` and `repeated()` (Siesta's), over real requests to the embedded server.
@Suite struct RequestChainTests {
    @Test(arguments: TransportKind.allCases)
    func aChainPassesToANewRequestAndEndsWithItsResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let chain = session.request(server.url("/status/401")).chained { response in
                guard response.response?.statusCode == 401 else { return .useThisResponse }
                return .passTo(session.request(server.url("/base64/Y2hhaW5lZA==")))
            }
            let text = await value(within: hangLimit) { await chain.validate().serializingString().result }
            #expect(text?.success == "chained")
            #expect(chain.response?.statusCode == 200)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aChainCanKeepItsResponseOrUseAnother(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let kept = session.request(server.url("/base64/a2VwdA==")).chained { _ in .useThisResponse }
            let keptText = await value(within: hangLimit) { await kept.serializingString().result }
            #expect(keptText?.success == "kept")
            let replaced = session.request(server.url("/status/500")).chained { response in
                response.response?.statusCode == 500 ? .useResponse(.text("fallback")) : .useThisResponse
            }
            let replacedText = await value(within: hangLimit) { await replaced.validate().serializingString().result }
            #expect(replacedText?.success == "fallback")
            // The first link's validation failure is the chain's, when kept.
            let failed = session.request(server.url("/status/404")).validate().chained { _ in .useThisResponse }
            let failure = await value(within: hangLimit) { await failed.serializingData().result }
            #expect(failure?.failure?.responseCode == 404)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingAChainCancelsTheRunningLinkAndSkipsTheCallback(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let link = session.request(server.url("/fault/hang?seconds=60"))
            let called = Mutex(false)
            let chain = link.chained { _ in
                called.withLock { $0 = true }
                return .useThisResponse
            }
            chain.resume()
            try await server.waitForRequests(1)
            chain.cancel()
            let result = await value(within: hangLimit) { await chain.serializingData().result }
            #expect(result?.failure?.isExplicitlyCancelledError == true)
            let linkResult = await value(within: hangLimit) { await link.serializingData().result }
            #expect(linkResult?.failure?.isExplicitlyCancelledError == true)
            // The link's own handler ran after the chain's would have: the callback's queue is drained.
            await withCheckedContinuation { continuation in
                DispatchQueue.courierCallbacks.async { continuation.resume() }
            }
            #expect(!called.withLock { $0 })
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theSessionsRetrierRetriesEachLinkButNotTheChainAgain(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.001))
            let key = UUID().uuidString
            let chain = session.request(server.url("/fault/flaky/\(key)?times=10&status=503")).validate()
                .chained { _ in .useThisResponse }
            let result = await value(within: hangLimit) { await chain.serializingData().result }
            #expect(result?.failure?.responseCode == 503)
            // The link's first attempt and its one retry; a retried chain would have sent two more.
            #expect(server.attempts(forKey: key) == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aChainStartsAtOnceWhenItsRequestHasStarted(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let first = session.request(server.url("/get")).resume()
            let chain = first.chained { _ in .useResponse(.text("done")) }
            #expect(chain.isResumed)
            let text = await value(within: hangLimit) { await chain.serializingString().result }
            #expect(text?.success == "done")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRepeatedRequestIsSentAgainWithItsSettingsAndNoneOfItsValidators(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let key = UUID().uuidString
            let first = session.request(
                server.url("/fault/flaky/\(key)?times=1&status=503"),
                shouldAutomaticallyResume: false
            )
            .redirect(using: .doNotFollow)
            .validate(statusCode: [503])
            first.resume()
            let firstResult = await value(within: hangLimit) { await first.serializingData().result }
            #expect(firstResult?.failure == nil)
            let again = first.repeated()
            #expect(again.isInitialized)
            #expect(again.shouldAutomaticallyResume == false)
            #expect(again.redirectHandler is Redirector)
            again.resume()
            let againResult = await value(within: hangLimit) { await again.serializingData().result }
            // Its validator (503 only) did not come along: the 200 passes.
            #expect(againResult?.failure == nil)
            #expect(again.response?.statusCode == 200)
            #expect(server.attempts(forKey: key) == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func repeatedUploadsDownloadsAndStreamsSendTheSameRequestAgain(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let upload = session.upload(Data("body".utf8), to: server.url("/anything"), method: .post)
            _ = await value(within: hangLimit) { await upload.serializingData().result }
            let uploadAgain = await value(within: hangLimit) {
                await upload.repeated().serializingDecodable(AnythingEcho.self).result
            }
            #expect(uploadAgain?.success?.data == "body")
            let download = session.download(server.url("/bytes/16"))
            _ = await value(within: hangLimit) { await download.serializingData().result }
            let downloadAgain = await value(within: hangLimit) { await download.repeated().serializingData().result }
            #expect(downloadAgain?.success?.count == 16)
            let stream = session.streamRequest(server.url("/stream/2"))
            let count: @Sendable (DataStreamRequest) async -> Int? = { request in
                await value(within: hangLimit) {
                    var bytes = 0
                    do {
                        for try await data in request.streamingData() { bytes += data.count }
                    } catch {
                        return -1
                    }
                    return bytes
                }
            }
            let streamedFirst = await count(stream)
            let streamedAgain = await count(stream.repeated())
            #expect((streamedFirst ?? 0) > 0)
            #expect(streamedAgain == streamedFirst)
            try await server.waitForRequests(6)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRepeatOnAGoneSessionFailsAsInvalidated(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            var session: Session? = transport.makeSession()
            let first = session?.request(server.url("/get"))
            _ = await value(within: hangLimit) { await first?.serializingData().result }
            await session?.invalidate()
            session = nil
            let again = try #require(first?.repeated())
            let result = await value(within: hangLimit) { await again.serializingData().result }
            #expect(result?.failure?.kind == .sessionInvalidated)
        }
    }
}

private struct AnythingEcho: Decodable {
    let data: String
}
