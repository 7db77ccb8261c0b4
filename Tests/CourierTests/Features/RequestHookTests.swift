import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's request hooks: `onURLRequestCreation`, `cURLDescription(on:calling:)` and
/// `onHTTPResponse` with its allow/cancel disposition, on data and stream requests.
@Suite struct RequestHookTests {
    @Test(arguments: TransportKind.allCases)
    func creationHooksSeeEachAttemptAndTheCURLCommandOnce(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // One serial queue for the hooks and the response: the hooks, queued as each attempt
            // is made, have all run when the response handler runs.
            let queue = DispatchQueue(label: "RequestHookTests")
            let requests = Protected<[URLRequest]>([])
            let commands = Protected<[String]>([])
            let key = UUID().uuidString
            let response = await withCheckedContinuation { continuation in
                session.request(
                    server.url("/fault/flaky/\(key)?times=1&status=503"),
                    interceptor: .retryPolicy(exponentialBackoffScale: 0.01)
                )
                .onURLRequestCreation(on: queue) { request in requests.withLock { $0.append(request) } }
                .cURLDescription(on: queue) { command in commands.withLock { $0.append(command) } }
                .validate()
                .responseData(queue: queue) { continuation.resume(returning: $0) }
            }
            #expect(response.error == nil)
            #expect(requests.withLock { $0.count } == 2, "one per attempt")
            #expect(requests.withLock { $0.allSatisfy { $0.url?.path.hasSuffix(key) == true } })
            let made = commands.withLock { $0 }
            #expect(made.count == 1)
            #expect(made.first?.contains(#"-X "GET""#) == true)
            #expect(made.first?.contains("/fault/flaky/\(key)") == true)

            // Asked after the request was made: answered at once, with the latest request.
            let request = session.request(server.url("/get"))
            _ = await request.serializingData().result
            let late = await withCheckedContinuation { continuation in
                request.cURLDescription { continuation.resume(returning: $0) }
            }
            #expect(late.contains("/get"))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anHTTPResponseHandlerCanCancelBeforeTheBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let seen = Protected<[Int]>([])
            let cancelled = await session.request(server.url("/bytes/100000"))
                .onHTTPResponse { response, completion in
                    seen.withLock { $0.append(response.statusCode) }
                    completion(.cancel)
                }
                .serializingData().response
            #expect(cancelled.error?.isExplicitlyCancelledError == true)
            #expect(seen.withLock { $0 } == [200])

            let allowed = try await session.request(server.url("/bytes/1000"))
                .onHTTPResponse { response async -> Request.ResponseDisposition in
                    response.statusCode == 200 ? .allow : .cancel
                }
                .serializingData().value
            #expect(allowed.count == 1000)

            let refused = await session.request(server.url("/status/418"))
                .onHTTPResponse { response async -> Request.ResponseDisposition in
                    response.statusCode == 200 ? .allow : .cancel
                }
                .serializingData().result
            #expect(refused.failure?.isExplicitlyCancelledError == true)

            let observed = Protected<Int?>(nil)
            let queue = DispatchQueue(label: "RequestHookTests.observe")
            let plain = await withCheckedContinuation { continuation in
                session.request(server.url("/get"))
                    .onHTTPResponse(on: queue) { response in observed.withLock { $0 = response.statusCode } }
                    .responseData(queue: queue) { continuation.resume(returning: $0) }
            }
            #expect(plain.error == nil)
            #expect(observed.withLock { $0 } == 200)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamsHTTPResponseHandlerCanCancelBeforeAnyPiece(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let pieces = Protected(0)
            let completion = await withCheckedContinuation { continuation in
                session.streamRequest(server.url("/stream-bytes/50000"))
                    .onHTTPResponse { _, completion in completion(.cancel) }
                    .responseStream { stream in
                        switch stream.event {
                        case .stream: pieces.withLock { $0 += 1 }
                        case .complete(let completion): continuation.resume(returning: completion)
                        }
                    }
            }
            #expect(completion.error?.isExplicitlyCancelledError == true)
            #expect(pieces.withLock { $0 } == 0)

            var total = 0
            for try await piece in session.streamRequest(server.url("/stream-bytes/5000"))
                .onHTTPResponse(perform: { _ async -> Request.ResponseDisposition in .allow }).streamingData()
            {
                total += piece.count
            }
            #expect(total == 5000)
            await session.invalidate()
        }
    }

    /// The handler answers only once the attempt has completed: the stream must still hand on
    /// the whole body, then end; and the handler's verdict still counts.
    @Test(arguments: TransportKind.allCases)
    func aStreamWaitsForALateHTTPResponseAnswer(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            for disposition in [Request.ResponseDisposition.allow, .cancel] {
                let (asked, ask) = AsyncStream<@Sendable (Request.ResponseDisposition) -> Void>.makeStream()
                let request = session.streamRequest(server.url("/bytes/300"))
                    .onHTTPResponse { _, completion in ask.yield(completion) }
                let received = Protected(0)
                let ended = Task {
                    await withCheckedContinuation { (continuation: CheckedContinuation<CourierError?, Never>) in
                        request.responseStream { stream in
                            if let value = stream.value { received.withLock { $0 += value.count } }
                            if let completion = stream.completion { continuation.resume(returning: completion.error) }
                        }
                    }
                }
                // Wait until the handler was asked, then (at most a second) for the attempt to
                // complete: it does over FoundationNetworking, which cannot hold the transfer
                // back; AsyncHTTPClient holds it back while the handler decides, so it may not.
                // The completion is held inside the request, so its metrics are the only sign
                // of it: polled, with a bound.
                let answer = await value(within: hangLimit) {
                    () -> (@Sendable (Request.ResponseDisposition) -> Void)? in
                    for await completion in asked { return completion }
                    return nil
                }
                let completed = ContinuousClock.now + .seconds(1)
                while request.allMetrics.isEmpty, ContinuousClock.now < completed {
                    try await Task.sleep(for: .milliseconds(5))
                }
                let respond = try #require(answer ?? nil, "the handler was asked")
                respond(disposition)
                let error = await value(within: hangLimit) { await ended.value }
                switch disposition {
                case .allow:
                    #expect(error.map { $0 == nil } == true, "ended without error: \(String(describing: error))")
                    #expect(received.withLock { $0 } == 300)
                case .cancel:
                    #expect(error??.isExplicitlyCancelledError == true)
                    #expect(received.withLock { $0 } == 0)
                }
            }
            await session.invalidate()
        }
    }

    @Test func cURLQuotingIsSafeForAShell() {
        // A combining mark after a quote, or a prepended mark before `$`, makes one Character
        // of the two: quoting goes by Unicode scalar, so neither hides.
        #expect(Request.shellQuoted("\"\u{301}; id") == "\"\\\"\u{301}; id\"")
        #expect(Request.shellQuoted("\u{600}$(id)") == "\"\u{600}\\$(id)\"")
        // Control characters cannot reach the terminal raw.
        #expect(Request.shellQuoted("a\u{1B}[201~b") == "\"a\"$'\\x1B'\"[201~b\"")
        // `!` would expand from the shell's history inside double quotes (`!#` pastes the line so
        // far, unbalancing the quotes): it is written in single quotes.
        #expect(Request.shellQuoted("a; !#") == ##""a; "'!'"#""##)
        #expect(Request.shellQuoted(#"a "b" $HOME `id` \n"#) == #""a \"b\" \$HOME \`id\` \\n""#)
    }

    @Test func cURLDescriptionsShowCookiesAsRedactedFlags() async throws {
        try await TestServer.withRunningServer { server in
            let session = TransportKind.asyncHTTPClient.makeSession()
            let request = session.request(server.url("/get"), headers: ["Cookie": "session=secret"])
            _ = await request.serializingData().result
            let description = request.cURLDescription()
            #expect(description.contains(#"-b "***""#))
            #expect(!description.contains("secret"))
            #expect(!description.contains("Cookie:"))
            #expect(request.cURLDescription(includingCredentials: true).contains(#"-b "session=secret""#))
            await session.invalidate()
        }
    }
}
