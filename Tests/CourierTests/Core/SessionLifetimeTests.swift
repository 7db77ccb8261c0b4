import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request in flight keeps its session (and the session its transport) alive; a session that
/// nothing holds and nothing runs on shuts its transport down.
@Suite struct SessionLifetimeTests {
    @Test(arguments: TransportKind.allCases)
    func aSessionNobodyHoldsFinishesItsAwaitedRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let recorder = InvalidationRecorder(transport.makeTransport())
            // The session is a temporary: only the request holds it while the server waits.
            let data = try await Session(transport: recorder).request(server.url("/delay/0.2")).serializingData().value
            #expect(!data.isEmpty)
            #expect(
                await recorder.waitForInvalidation(within: hangLimit),
                "the session went away once its request finished"
            )
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSessionNobodyHoldsAnswersItsHandler(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let recorder = InvalidationRecorder(transport.makeTransport())
            let response = await value(within: hangLimit) {
                await withCheckedContinuation { continuation in
                    Session(transport: recorder).request(server.url("/delay/0.2")).responseData { response in
                        continuation.resume(returning: response)
                    }
                }
            }
            #expect((try? response?.result.get())?.isEmpty == false, "answered with the body, not a cancellation")
            #expect(await recorder.waitForInvalidation(within: hangLimit))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestNeverStartedDoesNotKeepItsSessionAlive(transport: TransportKind) async throws {
        let recorder = InvalidationRecorder(transport.makeTransport())
        var session: Session? = Session(
            configuration: Session.Configuration { $0.startRequestsImmediately = false },
            transport: recorder
        )
        let request = session?.request("http://127.0.0.1:9/never")
        session = nil
        // The request holds the session until it finishes: cancelling it lets go.
        #expect(request?.isInitialized == true)
        request?.cancel()
        #expect(await recorder.waitForInvalidation(within: hangLimit))
    }
}

extension SessionLifetimeTests {
    @Test(arguments: TransportKind.allCases)
    func aRequestWithAHandlerNeverStartedDoesNotKeepItsSessionAlive(transport: TransportKind) async {
        let recorder = InvalidationRecorder(transport.makeTransport())
        do {
            let session = Session(
                configuration: Session.Configuration { $0.startRequestsImmediately = false },
                transport: recorder
            )
            let request = session.request("http://127.0.0.1:9/never")
            request.responseData { _ in }
            _ = request.serializingData()
            #expect(request.isInitialized)
        }
        #expect(
            await recorder.waitForInvalidation(within: hangLimit),
            "nothing held the request, so nothing held the session"
        )
    }

    @Test(arguments: TransportKind.allCases)
    func aSuspendedRequestNobodyHoldsEndsWithItsSession(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let recorder = InvalidationRecorder(transport.makeTransport())
            let (results, continuation) = AsyncStream<Result<Data, CourierError>>.makeStream()
            do {
                let session = Session(transport: recorder)
                // Paced over two minutes, so that it is still running when this task gets to suspend
                // it even at a full run's start, when the pool can be held for 30 s (`hangLimit`);
                // the session's end ends it long before.
                let request = session.request(server.url("/range/100000?chunk_size=1000&duration=120"))
                request.responseData { continuation.yield($0.result) }
                try await server.waitForRequests(1)
                request.suspend()
            }
            #expect(await recorder.waitForInvalidation(within: hangLimit), "a paused request does not hold its session")
            let result = await value(within: hangLimit) {
                var iterator = results.makeAsyncIterator()
                return await iterator.next()
            }
            // The session, going away, ended it, as Alamofire's deinit does: not a cancel.
            #expect(result??.failure?.kind == .sessionInvalidated)
        }
    }
}

/// A transport that passes everything to another and reports when it is invalidated.
private final class InvalidationRecorder: Transport {
    private let base: any Transport
    private let invalidations: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init(_ base: any Transport) {
        self.base = base
        (invalidations, continuation) = AsyncStream<Void>.makeStream()
    }

    func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    )
        -> any TransportTask
    {
        base.makeTask(for: request, body: body, eventHandler: eventHandler)
    }

    func invalidate() async {
        await base.invalidate()
        continuation.yield()
    }

    /// Whether the transport was invalidated within `seconds`.
    func waitForInvalidation(within seconds: Double) async -> Bool {
        let invalidations = self.invalidations
        return await value(within: seconds) {
            var iterator = invalidations.makeAsyncIterator()
            return await iterator.next() != nil
        } ?? false
    }
}

extension SessionLifetimeTests {
    /// How a request ends, for `aFinishedRequestHasLetGoOfItsSessionWhenItsCallerResumes`.
    enum Ending: String, CaseIterable, Sendable {
        case success, failure, retrierSaysNo
    }

    /// By the time an awaiting caller resumes, the request no longer holds its session, however
    /// it ended: a caller that then drops its own reference ends the session at once.
    @Test(arguments: TransportKind.allCases, Ending.allCases)
    func aFinishedRequestHasLetGoOfItsSessionWhenItsCallerResumes(transport: TransportKind, ending: Ending) async throws
    {
        try await TestServer.withRunningServer { server in
            let interceptor: Interceptor? =
                ending == .retrierSaysNo ? Interceptor(retriers: [Retrier { _, _, _ in .doNotRetry }]) : nil
            var session: Session? = Session(transport: transport.makeTransport(), interceptor: interceptor)
            let path = ending == .success ? "/get" : "/status/500"
            let result = await session?.request(server.url(path)).validate().serializingData().result
            #expect((result?.failure == nil) == (ending == .success))
            weak let released = session
            session = nil
            #expect(released == nil, "nothing but the caller held the session once the request finished")
        }
    }
}
