import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire 5.11's `OfflineRetrier`: an offline failure waits for connectivity, at most
/// `maximumWait`, then retries.
@Suite struct OfflineRetrierTests {
    /// A trigger the test fires, which says when someone starts waiting on it.
    final class SignallingTrigger: RetryTrigger {
        private let handlers = TestLock<[UUID: @Sendable (RetryTriggerEvent) -> Void]>([:])
        let observed: AsyncStream<Void>
        private let observedContinuation: AsyncStream<Void>.Continuation

        init() {
            (observed, observedContinuation) = AsyncStream<Void>.makeStream()
        }

        private let observations = TestLock(0)

        /// How many waits began, in all.
        var observeCount: Int { observations.withLock { $0 } }

        func observe(_ handler: @escaping @Sendable (RetryTriggerEvent) -> Void) -> RetryTriggerObservation {
            let id = UUID()
            handlers.withLock { $0[id] = handler }
            observations.withLock { $0 += 1 }
            observedContinuation.yield()
            return RetryTriggerObservation { [weak self] in self?.handlers.withLock { _ = $0.removeValue(forKey: id) } }
        }

        func fire() {
            handlers.withLock { Array($0.values) }.forEach { $0(.all) }
        }
    }

    /// The connection reset counts as "offline" here: a test cannot unplug the machine.
    private static let resetIsOffline: @Sendable (any Error) -> Bool = {
        ($0 as? CourierError)?.kind == .transportFailed
    }

    @Test(arguments: TransportKind.allCases)
    func anOfflineFailureRetriesWhenConnectivityReturns(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let trigger = SignallingTrigger()
            let retrier = OfflineRetrier(
                trigger: trigger,
                maximumWait: .seconds(60),
                isOfflineError: Self.resetIsOffline
            )
            let session = transport.makeSession(interceptor: retrier)
            let key = UUID().uuidString
            let request = session.request(server.url("/fault/flaky/\(key)?times=1&fault=reset"))
            let response = Task { await request.validate().serializingData().response }
            // Once the attempt has begun, connectivity "returns": the retrier either waits for
            // this event already, or finds it when the attempt fails.
            try await server.waitForRequests(1, timeout: .seconds(30))
            trigger.fire()
            let result = await response.value
            #expect(result.result.failure == nil, "\(result)")
            #expect(request.retryCount == 1)
            #expect(server.attempts(forKey: key) == 2)
            #expect(trigger.observeCount == 1, "one observation, for the retrier's life")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestStillOfflineAfterTheWaitFailsWithItsOwnError(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let trigger = SignallingTrigger()
            let retrier = OfflineRetrier(
                trigger: trigger,
                maximumWait: .milliseconds(50),
                isOfflineError: Self.resetIsOffline
            )
            let session = transport.makeSession(interceptor: retrier)
            let key = UUID().uuidString
            let result = await session.request(server.url("/fault/flaky/\(key)?times=1&fault=reset"))
                .serializingData().result
            #expect(result.failure?.kind == .transportFailed)
            #expect(server.attempts(forKey: key) == 1)
            #expect(retrier.waitsBegun == 1, "it waited, in vain")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anEventDuringTheFailedAttemptRetriesAtOnce(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let trigger = SignallingTrigger()
            // A 503 stands for "offline"; waiting would outlast the test's patience, so only an
            // event seen already retries.
            let retrier = OfflineRetrier(
                trigger: trigger,
                maximumWait: .milliseconds(1),
                isOfflineError: { ($0 as? CourierError)?.responseCode == 503 }
            )
            let session = transport.makeSession(interceptor: retrier)
            let key = UUID().uuidString
            let request = session.request(server.url("/fault/flaky/\(key)?times=1&status=503"))
                .onHTTPResponse { _, completion in
                    // Connectivity "returns" during the attempt, before it fails.
                    trigger.fire()
                    completion(.allow)
                }
                .validate()
            let result = await request.serializingData().result
            #expect(result.failure == nil, "\(result)")
            #expect(request.retryCount == 1, "the event during the first attempt retried it at once")
            #expect(server.attempts(forKey: key) == 2)
            #expect(retrier.waitsBegun == 0, "nothing waited")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func otherFailuresAreLeftToTheNextRetrier(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let trigger = SignallingTrigger()
            let retrier = OfflineRetrier(trigger: trigger)
            let session = transport.makeSession(interceptor: retrier)
            let result = await session.request(server.url("/status/503")).validate().serializingData().result
            #expect(result.failure?.responseCode == 503)
            #expect(retrier.waitsBegun == 0, "it never waited")
            await session.invalidate()
        }
    }

    @Test func theDefaultsAreAlamofires() {
        #expect(OfflineRetrier.defaultWait == .seconds(5))
        #expect(OfflineRetrier.defaultURLErrorOfflineCodes == [.notConnectedToInternet])
        #expect(OfflineRetrier.defaultIsOfflineError(URLError(.notConnectedToInternet)))
        #expect(OfflineRetrier.defaultIsOfflineError(CourierError.transportFailed(URLError(.notConnectedToInternet))))
        #expect(!OfflineRetrier.defaultIsOfflineError(URLError(.timedOut)))
    }

    @Test func cancellingTheRequestEndsTheWait() async throws {
        let trigger = SignallingTrigger()
        let retrier = OfflineRetrier(trigger: trigger, maximumWait: .seconds(600), isOfflineError: { _ in true })
        let session = Session(transport: URLSessionTransport())
        let request = session.request("http://127.0.0.1:9/", shouldAutomaticallyResume: false)
        let decision = Task { await retrier.retry(request, for: session, dueTo: .explicitlyCancelled) }
        let began = await value(within: hangLimit) { await trigger.observed.first { _ in true } != nil }
        #expect(began == true)
        decision.cancel()
        let answer = await value(within: hangLimit) { await decision.value }
        guard case .doNotRetry? = answer else {
            Issue.record("a cancelled wait does not retry: \(String(describing: answer))")
            return
        }
        request.cancel()
        await session.invalidate()
    }
}
