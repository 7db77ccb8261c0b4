import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A retry trigger fired by hand.
private final class HandTrigger: RetryTrigger {
    private let handlers = TestLock<[@Sendable (RetryTriggerEvent) -> Void]>([])

    func observe(_ handler: @escaping @Sendable (RetryTriggerEvent) -> Void) -> RetryTriggerObservation {
        handlers.withLock { $0.append(handler) }
        return RetryTriggerObservation {}
    }

    func fire(_ event: RetryTriggerEvent) {
        handlers.withLock { $0 }.forEach { $0(event) }
    }
}

/// Retry delays, early retries and deadlines on a ``ManualClock``: each step happens when the
/// test moves the clock, so these run in no time and cannot be late on a loaded machine. (The
/// same behaviours against a real server, in real time, are in `CourierTests/Core/SessionRetryTests.swift`.)
@Suite struct RetryClockTests {
    private static let url = "https://example.com/items"

    /// A session on `transport` and `clock` whose retrier asks for `delay` seconds after every failure.
    private static func session(
        _ transport: StubTransport,
        clock: ManualClock,
        delay: TimeInterval,
        configure: (inout Session.Configuration) -> Void = { _ in }
    ) -> Session {
        Session(
            configuration: Session.Configuration(configure),
            transport: transport,
            interceptor: Retrier { _, _, _ in .retryWithDelay(delay) },
            clock: clock
        )
    }

    /// Waits (bounded) until `count` tasks sleep on `clock`.
    private static func waitForSleepers(_ clock: ManualClock, count: Int) async throws {
        let ready: Void? = await value(within: hangLimit) { try? await clock.waitForSleepers(count: count) }
        try #require(ready != nil, "nothing went to sleep on the clock")
    }

    /// The response of `request`, waited for (bounded).
    private static func response(of request: DataRequest) async throws -> DataResponse<Data, CourierError> {
        let response = await value(within: hangLimit) { await request.serializingData().response }
        return try #require(response, "the request never finished")
    }

    @Test func theNextAttemptStartsWhenTheClockReachesTheDelay() async throws {
        let transport = StubTransport([.failure(URLError(.networkConnectionLost)), .status(200, body: Data("ok".utf8))])
        let clock = ManualClock()
        let session = Self.session(transport, clock: clock, delay: 30)
        let request = session.request(Self.url)
        let response = Task { try await Self.response(of: request) }
        try await Self.waitForSleepers(clock, count: 1)
        clock.advance(by: .seconds(29))
        #expect(clock.sleeperCount == 1)
        #expect(transport.requests.count == 1, "a second attempt before the delay ended")
        clock.advance(by: .seconds(1))
        let result = try await response.value
        #expect(result.value == Data("ok".utf8))
        #expect(request.retryCount == 1)
        #expect(transport.requests.count == 2)
    }

    @Test func aRetryThatWouldStartPastTheDeadlineFailsAtOnceWithTheLastError() async throws {
        let transport = StubTransport(unmatched: .failure(URLError(.networkConnectionLost)))
        let clock = ManualClock()
        let session = Self.session(transport, clock: clock, delay: 25) { $0.requestDeadline = 60 }
        let request = session.request(Self.url)
        let response = Task { try await Self.response(of: request) }
        // Attempts at 0, 25 and 50 s; the next would start at 75, past the deadline at 60.
        for _ in 0..<2 {
            try await Self.waitForSleepers(clock, count: 2)  // the deadline and the retry delay
            clock.advance(by: .seconds(25))
        }
        let result = try await response.value
        #expect(result.error?.urlError?.code == .networkConnectionLost, "the last attempt's error, not a timeout")
        #expect(transport.requests.count == 3)
        #expect(request.retryCount == 2)
        #expect(clock.sleeperCount == 0, "the deadline stops sleeping when the request fails")
    }

    @Test func theDeadlineEndsAnAttemptThatHangs() async throws {
        let gate = StubGate()
        let transport = StubTransport(unmatched: StubResponse.status(200).wait(for: gate).body("never"))
        let clock = ManualClock()
        let session = Self.session(transport, clock: clock, delay: 1) { $0.requestDeadline = 10 }
        let request = session.request(Self.url)
        let response = Task { try await Self.response(of: request) }
        // The attempt is under way and its deadline asleep: only then does the clock move.
        let arrived: Void? = await value(within: hangLimit) { await gate.waitForArrivals() }
        try #require(arrived != nil, "the attempt never reached the stub")
        try await Self.waitForSleepers(clock, count: 1)
        clock.advance(by: .seconds(9))
        #expect(request.state == .resumed)
        clock.advance(by: .seconds(1))
        let result = try await response.value
        #expect(result.error?.urlError?.code == .timedOut)
        #expect(transport.requests.count == 1)
        gate.open()
    }

    @Test func aTriggerStartsTheRetryAtOnceAndNothingSleepsOn() async throws {
        let transport = StubTransport([
            .failure(URLError(.notConnectedToInternet)), .status(200, body: Data("ok".utf8)),
        ])
        let clock = ManualClock()
        let trigger = HandTrigger()
        let session = Self.session(transport, clock: clock, delay: 600) { $0.retryTriggers = [trigger] }
        let request = session.request(Self.url)
        let response = Task { try await Self.response(of: request) }
        try await Self.waitForSleepers(clock, count: 1)
        trigger.fire(.origin("https://other.example:443"))
        #expect(clock.sleeperCount == 1, "another origin's event")
        trigger.fire(.origin("https://example.com:443"))
        let result = try await response.value
        #expect(result.error == nil)
        #expect(transport.requests.count == 2)
        #expect(clock.sleeperCount == 0, "the released wait no longer sleeps out its 600 s")
        #expect(clock.now.offset == .zero)
    }

    @Test func aDelayTheServerSetIsNotCutShort() async throws {
        let transport = StubTransport([
            .status(503, headers: ["Retry-After": "120"]), .status(200, body: Data("ok".utf8)),
        ])
        let clock = ManualClock()
        let trigger = HandTrigger()
        let session = Self.session(transport, clock: clock, delay: 120) { $0.retryTriggers = [trigger] }
        let request = session.request(Self.url).validate()
        let response = Task { try await Self.response(of: request) }
        try await Self.waitForSleepers(clock, count: 1)
        trigger.fire(.all)
        #expect(clock.sleeperCount == 1)
        #expect(transport.requests.count == 1, "the server asked for 120 s")
        clock.advance(by: .seconds(120))
        let result = try await response.value
        #expect(result.error == nil)
        #expect(transport.requests.count == 2)
    }

    @Test func aSuccessOnTheSameOriginStartsTheWaitingRetry() async throws {
        let transport = StubTransport()
        transport.enqueue(.failure(URLError(.networkConnectionLost))) { $0.url?.path == "/waits" }
        transport.stub(.status(200, body: Data("ok".utf8)))
        let clock = ManualClock()
        let session = Self.session(transport, clock: clock, delay: 600)
        let waiting = session.request("https://example.com/waits")
        let response = Task { try await Self.response(of: waiting) }
        try await Self.waitForSleepers(clock, count: 1)
        let other = try await Self.response(of: session.request("https://example.com/other"))
        #expect(other.error == nil)
        let result = try await response.value
        #expect(result.error == nil)
        #expect(waiting.retryCount == 1)
        #expect(clock.now.offset == .zero)
    }
}
