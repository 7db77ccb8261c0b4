import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct URLSessionTransportTests {
    /// A configuration with URLSession's cookies on (`.ephemeral` keeps its own store) does not
    /// bring them back: the Courier session keeps cookies, or, here, none.
    @Test func aConfigurationsOwnCookieHandlingIsTurnedOff() async throws {
        struct Echo: Decodable { var cookies: [String: String] }
        try await TestServer.withRunningServer { server in
            let configuration = URLSessionConfiguration.ephemeral
            #expect(configuration.httpShouldSetCookies, "the premise: ephemeral sets cookies")
            let session = Session(
                configuration: Session.Configuration { $0.cookieStorage = nil },
                transport: URLSessionTransport(configuration: configuration)
            )
            // A 302 with the cookie, then its redirect to /cookies, which echoes what came.
            let set = try await session.request(server.url("/cookies/set?session=abc123"))
                .serializingDecodable(Echo.self).value
            #expect(set.cookies.isEmpty)
            let later = try await session.request(server.url("/cookies")).serializingDecodable(Echo.self).value
            #expect(later.cookies.isEmpty, "URLSession stored nothing and sent nothing")
            #expect(configuration.httpShouldSetCookies, "the caller's configuration is left as it was")
            await session.invalidate()
        }
    }

    /// `invalidate()` returns once URLSession has reported the session invalid, after its
    /// tasks' last delegate calls, whether it is called once, again, or twice at the same time
    /// (URLSession reports the invalidation only once).
    @Test func invalidateReturnsHoweverOftenItIsCalled() async throws {
        try await TestServer.withRunningServer { server in
            let transport = URLSessionTransport()
            let session = Session(transport: transport)
            _ = try await session.request(server.url("/get")).serializingData().value
            let together = await value(within: hangLimit) {
                async let first: Void = transport.invalidate()
                async let second: Void = transport.invalidate()
                _ = await (first, second)
                return true
            }
            #expect(together == true, "two invalidations at once return")
            let again = await value(within: hangLimit) {
                await transport.invalidate()
                return true
            }
            #expect(again == true, "an invalidation after the end returns")
        }
    }

    /// A task asked for once invalidation has begun (a redirect's next hop, a cache's
    /// revalidation, made late) fails as cancelled when resumed: FoundationNetworking would
    /// crash the process on a task made on an invalidated session.
    @Test func aTaskMadeAfterInvalidationFailsAsCancelled() async throws {
        try await TestServer.withRunningServer { server in
            let transport = URLSessionTransport()
            await transport.invalidate()
            let recorder = ExchangeRecorder()
            let task = transport.makeTask(
                for: RequestHead(method: .get, url: server.url("/get")),
                body: nil,
                eventHandler: recorder
            )
            task.resume()
            let outcome = await value(within: hangLimit) { await recorder.completion() }
            #expect(outcome != nil, "the task never ended")
            #expect(outcome?.error == .cancelled)
            #expect(outcome?.head == nil)
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
        }
    }

    /// The transport follows no redirect (Courier's request does, the same way on every
    /// transport): a 302 is reported as it is, with its own URL and its body.
    @Test func aRedirectIsReportedAsItIs() async throws {
        try await TestServer.withRunningServer { server in
            let transport = URLSessionTransport()
            let recorder = ExchangeRecorder()
            let task = transport.makeTask(
                for: RequestHead(method: .get, url: server.url("/redirect/1")),
                body: nil,
                eventHandler: recorder
            )
            task.resume()
            let outcome = await value(within: hangLimit) { await recorder.completion() }
            #expect(outcome != nil, "the attempt never ended")
            #expect(outcome?.head?.statusCode == 302)
            #expect(outcome?.head?.url?.path == "/redirect/1")
            #expect(outcome?.body.isEmpty == false, "the 302's own body")
            await transport.invalidate()
        }
    }
}

/// Records one exchange's head and body, and hands them over once it completes.
private final class ExchangeRecorder: TransportEventHandler, Sendable {
    struct Outcome: Sendable {
        var head: ResponseHead?
        var body = Data()
        var error: URLError.Code?
    }

    private struct State {
        var outcome = Outcome()
        var isComplete = false
        var waiter: CheckedContinuation<Outcome, Never>?
    }

    private let state = TestLock(State())

    func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse) {
        transportTask(task, didReceive: ResponseHead(response))
    }

    func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {
        state.withLock { $0.outcome.head = head }
    }

    func transportTask(_ task: any TransportTask, didReceive data: Data) {
        state.withLock { $0.outcome.body.append(data) }
    }

    func transportTask(_ task: any TransportTask, didSendBodyBytes totalBytesSent: Int64, of totalBytesExpected: Int64?)
    {}

    func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics) {
        let (waiter, outcome) = state.withLock { state in
            state.isComplete = true
            state.outcome.error = error?.code
            defer { state.waiter = nil }
            return (state.waiter, state.outcome)
        }
        waiter?.resume(returning: outcome)
    }

    /// What the exchange reported, once it has completed.
    func completion() async -> Outcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Outcome? in
                guard state.isComplete else {
                    state.waiter = continuation
                    return nil
                }
                return state.outcome
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
