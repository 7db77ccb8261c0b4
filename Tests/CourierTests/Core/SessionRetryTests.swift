import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A retry trigger a test fires by hand; it counts its observers.
private final class ManualTrigger: RetryTrigger {
    private let handlers = Mutex<[UUID: @Sendable (RetryTriggerEvent) -> Void]>([:])

    var observerCount: Int { handlers.withLock { $0.count } }

    func observe(_ handler: @escaping @Sendable (RetryTriggerEvent) -> Void) -> RetryTriggerObservation {
        let id = UUID()
        handlers.withLock { $0[id] = handler }
        return RetryTriggerObservation { [weak self] in self?.handlers.withLock { _ = $0.removeValue(forKey: id) } }
    }

    func fire(_ event: RetryTriggerEvent) {
        handlers.withLock { Array($0.values) }.forEach { $0(event) }
    }
}

/// Retries once after a delay too long for any test to wait.
private struct SlowRetrier: RequestRetrier {
    func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        request.retryCount == 0 ? .retryWithDelay(600) : .doNotRetry
    }
}

extension SlowRetrier {
    static var interceptor: Interceptor { Interceptor(retriers: [SlowRetrier()]) }
}

/// Says when a request starts waiting out a retry delay.
private final class WaitMonitor: EventMonitor {
    let waiting = AsyncStream<TimeInterval>.makeStream()

    func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        waiting.continuation.yield(delay)
    }
}

/// The body of `/fault/flaky/:key`.
private struct Attempts: Decodable, Sendable {
    let attempts: Int
}

@Suite struct SessionRetryTests {
    /// Waits until a request of the session `monitor` watches is waiting out its retry delay.
    private func waitUntilWaiting(_ monitor: WaitMonitor) async {
        var iterator = monitor.waiting.stream.makeAsyncIterator()
        #expect(await iterator.next() == 600)
    }

    @Test(arguments: TransportKind.allCases)
    func aSuccessOnTheSameOriginEndsTheWait(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let monitor = WaitMonitor()
            let session = transport.makeSession(interceptor: SlowRetrier.interceptor, eventMonitors: [monitor])
            let waiting = session.request(server.url("/fault/flaky/early?times=1&status=503")).validate()
            let result = Task {
                await value(within: hangLimit) { try? await waiting.serializingDecodable(Attempts.self).value }
            }
            await waitUntilWaiting(monitor)
            #expect(session.waitingRetryCount == 1)
            _ = try await session.request(server.url("/get")).validate().serializingData().value
            let answer = await result.value
            #expect(answer??.attempts == 2, "retried at once, not after 600 s")
            #expect(session.waitingRetryCount == 0)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSuccessElsewhereOrAFailureDoesNotEndTheWait(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            try await TestServer.withRunningServer { other in
                let monitor = WaitMonitor()
                let session = transport.makeSession(interceptor: SlowRetrier.interceptor, eventMonitors: [monitor])
                let waiting = session.request(server.url("/fault/flaky/stay?times=1&status=503")).validate()
                let result = Task { await waiting.serializingData().result }
                await waitUntilWaiting(monitor)
                _ = try await session.request(other.url("/get")).serializingData().value
                // An empty 500 that its serializer accepts: with a retrier, a serializer's failure
                // would be offered to it (as in Alamofire), and this one retries after 600 s.
                _ = await session.request(server.url("/status/500")).serializingData(emptyResponseCodes: [500]).result
                #expect(session.waitingRetryCount == 1, "another origin's success, or a 500, proves nothing")
                #expect(server.attempts(forKey: "stay") == 1)
                waiting.cancel()
                #expect(await result.value.failure?.isExplicitlyCancelledError == true)
                #expect(session.waitingRetryCount == 0, "a cancelled request stops waiting")
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aTriggerEndsTheWaitAndIsReleasedOnInvalidation(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let trigger = ManualTrigger()
            let monitor = WaitMonitor()
            let session = transport.makeSession(
                { $0.retryTriggers = [trigger] },
                interceptor: SlowRetrier.interceptor,
                eventMonitors: [monitor]
            )
            #expect(trigger.observerCount == 1)
            let waiting = session.request(server.url("/fault/flaky/trigger?times=1&status=503")).validate()
            let result = Task {
                await value(within: hangLimit) { try? await waiting.serializingDecodable(Attempts.self).value }
            }
            await waitUntilWaiting(monitor)
            trigger.fire(.origin("http://elsewhere:80"))
            #expect(session.waitingRetryCount == 1, "another origin's event")
            trigger.fire(.all)
            #expect(await result.value??.attempts == 2)
            #expect(session.waitingRetryCount == 0)
            await session.invalidate()
            #expect(trigger.observerCount == 0, "the session stops observing")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theDeadlineEndsAStalledAttempt(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.requestDeadline = 0.5 }
            let start = ContinuousClock.now
            let result = await value(within: hangLimit) {
                await session.request(server.url("/fault/hang?seconds=60")).serializingData().result
            }
            let error = result?.failure
            #expect(error?.kind == .transportFailed)
            #expect(error?.urlError?.code == .timedOut)
            #expect(ContinuousClock.now - start >= .milliseconds(500))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theDeadlineSpansRetriesAndTheirDelays(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                // Roomy enough that a loaded machine still fits a second attempt in: with the
                // whole suite running on 2 cores, a task due to wake may wait seconds for a thread.
                { $0.requestDeadline = 20 },
                interceptor: Retrier { _, _, _ in .retryWithDelay(0.25) }
            )
            let request = session.request(server.url("/fault/flaky/deadline?times=1000&status=503")).validate()
            // The deadline ends it after 20 s; the outer bound only catches a hang, so it leaves
            // room for a task pool the rest of the suite keeps busy.
            let result = await value(within: hangLimit) { await request.serializingData().result }
            let error = try #require(result?.failure, "retrying forever ends at the deadline")
            // Either the last attempt's 503 (no retry fits before the deadline) or the deadline itself.
            #expect(error.responseCode == 503 || error.urlError?.code == .timedOut, "\(error)")
            let attempts = server.attempts(forKey: "deadline")
            #expect(
                attempts >= 2 && attempts <= 81,
                "0.25 s apart within 20 s: \(attempts) \(error) \(request.retryCount)"
            )
            await session.invalidate()
        }
    }

    #if os(Linux)
    @Test(
        .enabled(
            if: NetworkNamespace.canCreate,
            "`ip netns add` was refused: creating network namespaces needs root or CAP_SYS_ADMIN"
        ),
        arguments: TransportKind.allCases
    )
    func connectivityReturningEndsTheWait(transport: TransportKind) async throws {
        let namespace = try NetworkNamespace.create()
        defer { namespace.delete() }
        try namespace.ip("link", "add", "veth0", "type", "veth", "peer", "name", "veth1")
        let monitor = NetworkMonitor(networkNamespacePath: namespace.path)
        defer { monitor.stop() }
        try await TestServer.withRunningServer { server in
            let waits = WaitMonitor()
            let session = transport.makeSession(
                {
                    $0.retryTriggers = [monitor]
                    $0.retriesEarlyWhenOriginRecovers = false
                },
                interceptor: SlowRetrier.interceptor,
                eventMonitors: [waits]
            )
            let waiting = session.request(server.url("/fault/flaky/netns?times=1&status=503")).validate()
            let result = Task {
                await value(within: hangLimit) { try? await waiting.serializingDecodable(Attempts.self).value }
            }
            await waitUntilWaiting(waits)
            // The "network" comes back: a link in the monitored namespace goes up.
            try namespace.ip("link", "set", "veth1", "up")
            try namespace.ip("link", "set", "veth0", "up")
            #expect(await result.value??.attempts == 2, "retried when the link came up, not after 600 s")
            await session.invalidate()
        }
    }
    #endif
}
