import CourierTestServer
import Foundation
import Synchronization
import Testing

@testable import Courier

/// A clock a test moves by hand.
private final class ManualClock: Sendable {
    private let seconds = Mutex<TimeInterval>(1000)
    var now: TimeInterval { seconds.withLock { $0 } }
    func advance(by interval: TimeInterval) { seconds.withLock { $0 += interval } }
}

@Suite struct RetryBudgetTests {
    @Test func retriesAreAShareOfRequestsPlusAFloor() {
        let clock = ManualClock()
        let budget = RetryBudget(ratio: 0.2, minimumRetriesPerSecond: 0.5, window: 10) { clock.now }
        #expect(budget.availableRetries == 5, "the floor: 0.5 a second over 10 s")
        for _ in 0..<100 { budget.recordRequest() }
        #expect(budget.availableRetries == 25)
        let spent = (0..<40).filter { _ in budget.spendRetry() }.count
        #expect(spent == 25, "no more than the budget")
        #expect(budget.availableRetries == 0)
    }

    @Test func theWindowSlides() {
        let clock = ManualClock()
        let budget = RetryBudget(ratio: 0.5, minimumRetriesPerSecond: 0, window: 3) { clock.now }
        for _ in 0..<10 { budget.recordRequest() }
        #expect(budget.spendRetry())
        clock.advance(by: 2)
        #expect(budget.availableRetries == 4, "10 requests and 1 retry still count")
        clock.advance(by: 1)
        #expect(budget.availableRetries == 0, "3 s later they have left the window")
        #expect(!budget.spendRetry())
        clock.advance(by: 100)
        budget.recordRequest()
        budget.recordRequest()
        #expect(budget.availableRetries == 1)
    }

    @Test func outOfRangeSettingsAreClamped() {
        let budget = RetryBudget(ratio: 7, minimumRetriesPerSecond: -1, window: .infinity)
        #expect(budget.ratio == 1)
        #expect(budget.minimumRetriesPerSecond == 0)
        #expect(budget.window == 3600)
    }

    @Test(arguments: [Double.infinity, .nan, 1e300, -1, -.infinity, .greatestFiniteMagnitude])
    func nonFiniteOrHugeSettingsNeverTrap(value: Double) {
        let clock = ManualClock()
        let budget = RetryBudget(ratio: value, minimumRetriesPerSecond: value, window: value) { clock.now }
        #expect((0...1).contains(budget.ratio))
        #expect((0...RetryBudget.maximumRetriesPerSecond).contains(budget.minimumRetriesPerSecond))
        #expect((1...3600).contains(budget.window))
        for _ in 0..<10 { budget.recordRequest() }
        // Each of these converts the allowance to an `Int`: where NaN or infinity used to trap.
        #expect(budget.availableRetries >= 0)
        _ = budget.spendRetry()
        if value > 0 {
            #expect(budget.spendRetry(), "a huge floor allows retries")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSpentBudgetStopsRetriesAcrossTheSession(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // One retry in the window, whatever the traffic. The clock stands still: on a loaded
            // machine the requests may take longer than the window, which would free the retry.
            let budget = RetryBudget(ratio: 0, minimumRetriesPerSecond: 0.1, window: 10) { 1_000 }
            let session = transport.makeSession(
                { $0.retryBudget = budget },
                interceptor: RetryPolicy(exponentialBackoffScale: 0.01)
            )
            let first = await session.request(server.url("/fault/flaky/b1?times=9&status=503")).validate()
                .serializingData().result
            let second = await session.request(server.url("/fault/flaky/b2?times=9&status=503")).validate()
                .serializingData().result
            #expect(first.failure?.responseCode == 503)
            #expect(second.failure?.responseCode == 503, "fails with its own error, not a budget error")
            #expect(server.attempts(forKey: "b1") + server.attempts(forKey: "b2") == 3, "two requests, one retry")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anInfiniteFloorStillRetriesAgainstTheServer(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let budget = RetryBudget(ratio: .nan, minimumRetriesPerSecond: .infinity, window: .nan)
            let session = transport.makeSession(
                { $0.retryBudget = budget },
                interceptor: RetryPolicy(exponentialBackoffScale: 0.01)
            )
            let result = await session.request(server.url("/fault/flaky/inf?times=2&status=503")).validate()
                .serializingData().result
            #expect(result.failure == nil)
            #expect(server.attempts(forKey: "inf") == 3)
            await session.invalidate()
        }
    }
}
