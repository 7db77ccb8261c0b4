import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier follows redirects itself, the same way on both transports: the chain, the limit, the
/// handlers, the loop check, the method table and what is recorded of each hop.
@Suite struct RedirectTests {
    /// Records the redirects monitors hear of.
    private final class RedirectRecorder: EventMonitor, Sendable {
        private struct State {
            var followed: [Redirect] = []
            var waiter: (count: Int, continuation: CheckedContinuation<[Redirect], Never>)?
        }

        private let state = TestLock(State())

        func request(_ request: Request, willFollow redirect: Redirect) {
            let ready = state.withLock { state -> (CheckedContinuation<[Redirect], Never>, [Redirect])? in
                state.followed.append(redirect)
                guard let waiter = state.waiter, state.followed.count >= waiter.count else { return nil }
                state.waiter = nil
                return (waiter.continuation, state.followed)
            }
            if let (continuation, followed) = ready { continuation.resume(returning: followed) }
        }

        /// The redirects heard, once there are `count` (monitors hear on their own queue).
        func followed(count: Int) async -> [Redirect] {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> [Redirect]? in
                    guard state.followed.count < count else { return state.followed }
                    state.waiter = (count, continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// Stops at every redirect after a suspension point, as a handler that asks something first.
    private struct StoppingHandler: RedirectHandler {
        func request(
            _ request: Request,
            willBeRedirectedTo redirectRequest: URLRequest,
            for response: HTTPURLResponse
        ) async -> URLRequest? {
            await Task.yield()
            return nil
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aChainIsFollowedAndEveryHopRecorded(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let recorder = RedirectRecorder()
            let session = transport.makeSession(eventMonitors: [recorder])
            let request = session.request(server.url("/redirect/3"))
            let response = await request.serializingData().response
            #expect(response.error == nil)
            #expect(response.head?.statusCode == 200)
            #expect(response.head?.url?.path == "/get")
            let redirects = request.redirects
            #expect(redirects.map(\.response.statusCode) == [302, 302, 302])
            #expect(
                redirects.map(\.request.url.path) == ["/redirect/3", "/relative-redirect/2", "/relative-redirect/1"]
            )
            #expect(redirects.map(\.nextRequest.url.path) == ["/relative-redirect/2", "/relative-redirect/1", "/get"])
            #expect(redirects.map(\.metrics.statusCode) == [302, 302, 302])
            // A bound for a hang, not a timing check: monitors share one queue by default, which the
            // suite's first seconds, every test starting at once, can keep busy well past 10 s.
            let heard = await value(within: 60) { await recorder.followed(count: 3) }
            #expect(heard?.map(\.nextRequest.url.path) == redirects.map(\.nextRequest.url.path))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theLimitComesFromTheSessionUnlessTheRequestSetsItsOwn(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.redirectLimit = 2 }
            let error = await failure(of: session.request(server.url("/redirect/3")))
            #expect(error?.kind == .redirectFailed)
            #expect(error?.redirectFailureReason == .tooManyRedirects(limit: 2))
            #expect(error?.urlError?.code == .httpTooManyRedirects)
            let allowed = await session.request(server.url("/redirect/3")).redirect(limit: 3).serializingData().response
            #expect(allowed.head?.statusCode == 200)
            let none = await failure(of: session.request(server.url("/redirect/1")).redirect(limit: 0))
            #expect(none?.redirectFailureReason == .tooManyRedirects(limit: 0))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func doNotFollowMakesTheRedirectTheResponseWithItsBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/redirect/1")).redirect(using: .doNotFollow)
            let response = await request.serializingString().response
            #expect(response.head?.statusCode == 302)
            #expect(response.head?.value(forHTTPHeaderField: "Location") == "/get")
            #expect(response.value?.contains("Redirecting...") == true)
            #expect(request.redirects.isEmpty)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theSessionsHandlerAppliesUnlessTheRequestHasItsOwn(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(transport: transport.makeTransport(), redirectHandler: Redirector.doNotFollow)
            let stopped = await session.request(server.url("/redirect/1")).serializingData().response
            #expect(stopped.head?.statusCode == 302)
            let followed = await session.request(server.url("/redirect/1")).redirect(using: .follow)
                .serializingData().response
            #expect(followed.head?.statusCode == 200)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aHandlerThatAsksFirstAndStopsGetsTheWholeRedirect(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/redirect/1")).redirect(using: StoppingHandler())
            let response = await request.serializingString().response
            #expect(response.head?.statusCode == 302)
            #expect(response.value?.hasSuffix("If not, click the link.\n") == true, "the whole body, kept while asking")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func modifyChangesTheNextRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let redirector = Redirector.modify { _, next, response in
                var next = next
                next.setValue("from-\(response.statusCode)", forHTTPHeaderField: "X-Hop")
                return next
            }
            let request = session.request(server.url("/redirect-to?url=/headers")).redirect(using: redirector)
            let echo = try await request.serializingDecodable([String: [String: String]].self).value
            #expect(echo["headers"]?["X-Hop"] == "from-302")
            #expect(request.redirects.first?.nextRequest.headers["X-Hop"] == "from-302")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theCompletionHandlerFormDecidesOnce(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let redirector = Redirector.decide { _, next, _, completion in
                DispatchQueue.global().async {
                    completion(next)
                    completion(nil)  // A second call changes nothing.
                }
            }
            let response = await session.request(server.url("/redirect/2")).redirect(using: redirector)
                .serializingData().response
            #expect(response.head?.statusCode == 200)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aHandlersRequestIsCheckedLikeAnyOther(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let redirector = Redirector.modify { _, next, _ in
                var next = next
                next.url = URL(string: "http://127.0.0.1:65536/x")
                return next
            }
            let error = await failure(of: session.request(server.url("/redirect/1")).redirect(using: redirector))
            #expect(error?.kind == .invalidURL)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectBackToTheSameRequestIsALoop(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/redirect-loop"))
            let error = await failure(of: request)
            #expect(error?.kind == .redirectFailed)
            #expect(error?.redirectFailureReason == .loop(url: server.url("/redirect-loop").absoluteString))
            #expect(request.redirects.isEmpty)
            await session.invalidate()
        }
    }

    /// A redirect that sets the same cookie each time asks for the same request, cookie and
    /// all, again: a loop, found at once rather than at the redirect limit.
    @Test(arguments: TransportKind.allCases)
    func aRedirectSettingTheSameCookieEachTimeIsALoop(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/redirect-loop?cookie=visit"))
            let error = await failure(of: request)
            #expect(
                error?.redirectFailureReason == .loop(url: server.url("/redirect-loop?cookie=visit").absoluteString)
            )
            #expect(request.redirects.count == 1, "the second request carried the cookie the first had not")
            await session.invalidate()
        }
    }

    /// A redirect back to the same URL that sets a cookie is a login's round trip when the
    /// cookie goes with the next request, and a loop when it does not (cookies turned off).
    @Test(arguments: TransportKind.allCases)
    func aLoginRoundTripIsNoLoopWhileCookiesAreKept(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/login-round-trip"))
            let shown = try await request.serializingDecodable([String: [String: String]].self).value
            #expect(shown["cookies"] == ["session": "1"])
            #expect(request.redirects.count == 1)
            await session.invalidate()
            let withoutCookies = transport.makeSession { $0.cookieStorage = nil }
            let error = await failure(of: withoutCookies.request(server.url("/login-round-trip")))
            #expect(error?.redirectFailureReason == .loop(url: server.url("/login-round-trip").absoluteString))
            await withoutCookies.invalidate()
        }
    }

    /// 307 and 308 keep the method and the body; over URLSession too (FoundationNetworking sent
    /// an empty body when it followed them itself).
    @Test(arguments: TransportKind.allCases, [307, 308])
    func temporaryAndPermanentRedirectsResendTheBody(transport: TransportKind, status: Int) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let body = Data("name=courier".utf8)
            let echo = try await session.upload(
                body,
                to: server.url("/redirect-to?url=/anything&status_code=\(status)"),
                method: .put
            ).serializingDecodable([String: JSONScalar].self).value
            #expect(echo["method"] == .string("PUT"))
            #expect(echo["data"] == .string("name=courier"))
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("redirect-\(UUID().uuidString)")
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let fromFile = try await session.upload(
                file,
                to: server.url("/redirect-to?url=/anything&status_code=\(status)"),
                method: .post
            ).serializingDecodable([String: JSONScalar].self).value
            #expect(fromFile["data"] == .string("name=courier"), "the file was opened again for the next hop")
            await session.invalidate()
        }
    }

    /// A body that can be read only once cannot go to the next hop: the 307 is the response.
    @Test(arguments: TransportKind.allCases)
    func aBodyReadOnceStopsAtA307(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let stream = InputStream(data: Data("once".utf8))
            let response = await session.upload(
                stream,
                to: server.url("/redirect-to?url=/anything&status_code=307"),
                method: .post
            ).serializingData().response
            #expect(response.head?.statusCode == 307)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func a302TurnsAPostIntoAGetAndAHeadStaysAHead(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(
                server.url("/redirect-to?url=/anything&status_code=302"),
                method: .post,
                parameters: ["name": "courier"]
            )
            let echo = try await request.serializingDecodable([String: JSONScalar].self).value
            #expect(echo["method"] == .string("GET"))
            #expect(echo["data"] == .string(""))
            #expect(request.redirects.first?.nextRequest.headers["Content-Type"] == nil)
            let head = await session.request(server.url("/redirect-to?url=/get&status_code=303"), method: .head)
                .serializingData(emptyResponseCodes: [200]).response
            #expect(head.head?.statusCode == 200)
            await session.invalidate()
        }
    }

    /// Downloads and streams follow the same way: the file and the pieces are the last hop's.
    @Test(arguments: TransportKind.allCases)
    func downloadsAndStreamsFollowToo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let download = session.download(server.url("/redirect-to?url=/bytes/3000%3Fseed%3D1"))
            let data = try await download.serializingData().value
            #expect(data.count == 3000)
            #expect(download.redirects.count == 1)
            let stream = session.streamRequest(server.url("/redirect/2"))
            var received = Data()
            for try await piece in stream.streamingData() { received.append(piece) }
            #expect(String(decoding: received, as: UTF8.self).contains("\"url\""), "the body of /get")
            #expect(stream.redirects.count == 2)
            await session.invalidate()
        }
    }
}
