import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// The examples in `StubTransport`'s and `StubGate`'s documentation (and the README), as
/// users would write them: they must compile and pass.
@Suite struct StubTransportExampleTests {
    struct User: Decodable, Sendable {
        var name: String
    }

    @Test func aSessionOverTheStubDecodesTheScriptedBody() async throws {
        let transport = StubTransport()
        transport.enqueue(
            .status(200, headers: ["Content-Type": "application/json"], body: Data(#"{"name":"Ada"}"#.utf8))
        )
        let session = Session(transport: transport)
        let user = try await session.request("https://api.example.com/user").serializingDecodable(User.self).value
        #expect(user.name == "Ada")
        #expect(transport.requests.first?.url?.path == "/user")
        await session.invalidate()
    }

    @Test func aManualClockRunsARetryPolicysDelayWithoutWaiting() async throws {
        let clock = ManualClock()
        let transport = StubTransport([.failure(URLError(.networkConnectionLost)), .status(200, body: Data("ok".utf8))])
        let session = Session(transport: transport, interceptor: RetryPolicy(), clock: clock)
        let response = Task { await session.request("https://api.example.com/items").serializingData().response }
        let ready: Void? = await value(within: hangLimit) { try? await clock.waitForSleepers(count: 1) }
        try #require(ready != nil, "the request never waited out a delay")
        clock.advance(by: .seconds(60))
        #expect(await response.value.value == Data("ok".utf8))
        #expect(transport.requests.count == 2)
        await session.invalidate()
    }

    @Test func aGateStopsTheRequestWhereTheTestWantsIt() async throws {
        let transport = StubTransport()
        let gate = StubGate()
        transport.enqueue(StubResponse.status(200).wait(for: gate).body("done"))
        let session = Session(transport: transport)
        let request = session.request("https://example.com/")
        let task = Task { await request.serializingString().result }
        let arrived: Void? = await value(within: hangLimit) { await gate.waitForArrivals() }
        try #require(arrived != nil, "the request never reached the gate")
        request.cancel()
        gate.open()
        let result = await task.value
        guard case .failure(let error) = result else {
            Issue.record("a request cancelled before its body arrived succeeded: \(result)")
            return
        }
        #expect(error.isExplicitlyCancelledError)
        await session.invalidate()
    }

    @Test func aRetriedRequestTakesTheNextQueuedResponse() async throws {
        let transport = StubTransport([.status(503), .status(200, body: Data("ok".utf8))])
        let session = Session(
            configuration: Session.Configuration { $0.retryBudget = nil },
            transport: transport,
            interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffBase: 2, exponentialBackoffScale: 0.001)
        )
        let text = try await session.request("https://example.com/").validate().serializingString().value
        #expect(text == "ok")
        #expect(transport.requests.count == 2)
        #expect(transport.unusedResponseCount == 0)
        await session.invalidate()
    }
}
