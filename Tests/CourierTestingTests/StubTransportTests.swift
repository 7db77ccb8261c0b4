import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct StubTransportTests {
    private static let url = URL(string: "https://example.com/items?page=2")

    /// Makes a task for a GET of `url` on `transport`, recording into a new handler.
    private func makeTask(
        _ transport: StubTransport,
        url: URL? = StubTransportTests.url,
        body: RequestBody? = nil
    ) throws -> (any TransportTask, RecordingHandler) {
        let handler = RecordingHandler()
        let request = URLRequest(url: try #require(url))
        return (transport.makeTask(for: request, body: body, eventHandler: handler), handler)
    }

    /// Resumes `task` and waits (bounded) for its completion.
    private func run(_ task: any TransportTask, _ handler: RecordingHandler) async throws {
        task.resume()
        let done: Void? = await value(within: hangLimit) { await handler.waitForCompletion() }
        try #require(done != nil, "the task never completed")
    }

    @Test func aScriptPlaysInOrderThenCompletes() async throws {
        let transport = StubTransport()
        transport.enqueue(
            StubResponse().head(statusCode: 201, headerFields: [("X-A", "1"), ("x-a", "2")])
                .body("ab").delay(.milliseconds(1)).body("c")
        )
        let (task, handler) = try makeTask(transport)
        try await run(task, handler)
        #expect(handler.events == [.head(201), .body(Data("ab".utf8)), .body(Data("c".utf8)), .completion(nil)])
        let head = try #require(handler.heads.first)
        #expect(head.url == Self.url)
        #expect(head.value(forHTTPHeaderField: "X-A") == "1, 2")
        #expect(head.httpURLResponse?.statusCode == 201)
        let metrics = try #require(handler.metrics)
        #expect(metrics.statusCode == 201)
        #expect(metrics.bytesReceived == 3)
        #expect(metrics.networkProtocolName == "http/1.1")
        #expect(metrics.timeToFirstByte != nil)
        #expect(metrics.endDate >= metrics.startDate)
        #expect(handler.overlaps == 0)
    }

    @Test func aFailureEndsTheAttemptAndLaterStepsNeverPlay() async throws {
        let transport = StubTransport([StubResponse.status(200).fail(with: URLError(.networkConnectionLost)).body("x")])
        let (task, handler) = try makeTask(transport)
        try await run(task, handler)
        #expect(handler.events == [.head(200), .completion(.networkConnectionLost)])
        #expect(handler.metrics?.bytesReceived == 0)
    }

    @Test func queuedResponsesAreUsedOnceInOrderThenRulesThenTheUnmatchedAnswer() async throws {
        let transport = StubTransport()
        transport.stub(.status(404)) { $0.url?.path == "/missing" }
        transport.enqueue(.status(202)) { $0.url?.path == "/accepted" }
        transport.enqueue(.status(200))
        transport.enqueue(.status(204))
        var codes: [RecordingHandler.Event] = []
        // `/a` passes over the 202 it does not match; `/accepted` then takes it.
        let paths = ["/a", "/accepted", "/b", "/missing", "/missing", "/other"]
        for path in paths {
            let (task, handler) = try makeTask(transport, url: URL(string: "https://example.com\(path)"))
            try await run(task, handler)
            codes.append(handler.events[0])
        }
        #expect(
            codes == [.head(200), .head(202), .head(204), .head(404), .head(404), .completion(.resourceUnavailable)]
        )
        #expect(transport.unusedResponseCount == 0)
        #expect(transport.requests.map { $0.url?.path } == paths)
    }

    @Test func aResponderBuildsTheResponseFromTheRequest() async throws {
        let transport = StubTransport(unmatched: .status(500))
        transport.respond { request in
            guard let body = request.httpBody else { return nil }
            return .status(200, body: body)
        }
        let (echoed, echoHandler) = try makeTask(transport, body: .data(Data("hello".utf8)))
        try await run(echoed, echoHandler)
        #expect(echoHandler.events == [.sent(5, 5), .head(200), .body(Data("hello".utf8)), .completion(nil)])
        #expect(echoHandler.metrics?.bytesSent == 5)
        #expect(transport.requests.first?.httpBody == Data("hello".utf8), "the body is recorded")
        let (plain, plainHandler) = try makeTask(transport)
        try await run(plain, plainHandler)
        #expect(plainHandler.events == [.head(500), .completion(nil)])
    }

    @Test func scriptedUploadProgressReplacesTheAutomaticReport() async throws {
        let transport = StubTransport([StubResponse().uploadProgress(sent: 2, of: nil).status204()])
        let (task, handler) = try makeTask(transport, body: .data(Data("abcd".utf8)))
        try await run(task, handler)
        #expect(handler.events == [.sent(2, nil), .head(204), .completion(nil)])
    }

    @Test func cancelBeforeResumeCompletesWithCancelledOnce() async throws {
        let transport = StubTransport([.status(200)])
        let (task, handler) = try makeTask(transport)
        task.cancel()
        task.cancel()
        let done: Void? = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(done != nil)
        task.resume()
        task.cancel()
        #expect(handler.events == [.completion(.cancelled)])
    }

    @Test func cancelEndsAHangingAttempt() async throws {
        let transport = StubTransport([StubResponse.status(200).body("a").hang()])
        let (task, handler) = try makeTask(transport)
        task.resume()
        task.cancel()
        let done: Void? = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(done != nil)
        #expect(handler.events.last == .completion(.cancelled))
        #expect(handler.completions == 1)
    }

    @Test func aGateHoldsTheAttemptUntilOpened() async throws {
        let gate = StubGate()
        let transport = StubTransport([StubResponse.status(200).wait(for: gate).body("late")])
        let (task, handler) = try makeTask(transport)
        task.resume()
        let arrived: Void? = await value(within: hangLimit) { await gate.waitForArrivals() }
        #expect(arrived != nil)
        #expect(gate.arrivals == 1)
        #expect(handler.events == [.head(200)], "nothing after the gate plays while it is closed")
        gate.open()
        #expect(gate.isOpen)
        let done: Void? = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(done != nil)
        #expect(handler.events == [.head(200), .body(Data("late".utf8)), .completion(nil)])
    }

    @Test func suspendHoldsDeliveryUntilResume() async throws {
        let gate = StubGate()
        let transport = StubTransport([StubResponse.status(200).wait(for: gate).body("held")])
        let (task, handler) = try makeTask(transport)
        task.resume()
        let arrived: Void? = await value(within: hangLimit) { await gate.waitForArrivals() }
        #expect(arrived != nil)
        task.suspend()
        gate.open()
        // The gate's continuation ran on this thread, synchronously, and found the task
        // suspended: nothing can have been handed out since.
        #expect(handler.events == [.head(200)])
        task.resume()
        let done: Void? = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(done != nil)
        #expect(handler.events == [.head(200), .body(Data("held".utf8)), .completion(nil)])
    }

    @Test func anInvalidatedTransportFailsNewAttemptsAsCancelled() async throws {
        let transport = StubTransport(unmatched: .status(200))
        await transport.invalidate()
        let (task, handler) = try makeTask(transport)
        try await run(task, handler)
        #expect(handler.events == [.completion(.cancelled)])
    }

    @Test func aRequestWithoutURLFailsWithBadURL() async throws {
        let transport = StubTransport(unmatched: .status(200))
        var request = URLRequest(url: try #require(Self.url))
        request.url = nil
        let handler = RecordingHandler()
        let task = transport.makeTask(for: request, body: nil, eventHandler: handler)
        try await run(task, handler)
        #expect(handler.events == [.completion(.badURL)])
    }

    @Test func anEmptyScriptCompletesWithNoHead() async throws {
        let transport = StubTransport([StubResponse()])
        let (task, handler) = try makeTask(transport)
        try await run(task, handler)
        #expect(handler.events == [.completion(nil)])
        #expect(handler.metrics?.statusCode == nil)
    }
}

extension StubResponse {
    /// Appends a 204 head: a helper for tests building scripts step by step.
    fileprivate func status204() -> StubResponse { head(statusCode: 204) }
}
