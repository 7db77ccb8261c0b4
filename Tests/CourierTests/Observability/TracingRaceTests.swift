import Courier
import CourierObservability
import CourierTestSupport
import CourierTesting
import Foundation
import InMemoryTracing
import Testing

/// The tracing monitor under races, on the stub transport: thousands of requests, retried at
/// once, redirected, cancelled at random moments, while the monitor's events arrive whenever
/// its queue gets to them. Every span ends exactly once and none is left open.
@Suite struct TracingRaceTests {
    @Test func everySpanEndsOnceWhateverRaces() async throws {
        let total = 2000
        let tracer = W3CTestTracer()
        let events = MonitorEvents()
        let monitor = TracingEventMonitor(tracer: tracer, queue: events.queue)
        let transport = StubTransport()
        let failedOnce = TestLock(Set<Int>())
        transport.respond { request in
            guard let url = request.url, let index = Int(url.lastPathComponent) else { return nil }
            let pause = Duration.microseconds(Int64.random(in: 0...200))
            // Every third fails once with a 503 (retried at once); every fifth redirects first.
            if index % 3 == 0, failedOnce.withLock({ $0.insert(index).inserted }) {
                return StubResponse.status(503).delay(pause)
            }
            if index % 5 == 0, url.path.hasPrefix("/start") {
                return StubResponse.status(302, headers: ["Location": "/end/\(index)"]).delay(pause)
            }
            return StubResponse.status(200).delay(pause).body("ok")
        }
        let session = Session(
            transport: transport,
            interceptor: RetryAtOnceOn503(),
            eventMonitors: [monitor, events.monitor]
        )
        let finished = await value(within: 60) {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<total {
                    group.addTask {
                        let request = session.request("https://stub.test/start/\(index)").validate()
                        if index % 2 == 1 {
                            Task {
                                // A random moment: before, during or after its attempts.
                                for _ in 0..<Int.random(in: 0...40) { await Task.yield() }
                                request.cancel()
                            }
                        }
                        _ = await request.serializingData().response
                    }
                }
                await group.waitForAll()
            }
            return true
        }
        try #require(finished == true, "a request never answered")
        try await events.waitForFinishes(total)
        let spans = tracer.base.finishedSpans
        #expect(tracer.base.activeSpans.isEmpty, "\(tracer.base.activeSpans.count) spans never ended")
        #expect(tracer.spansEndedTwice.isEmpty, "\(tracer.spansEndedTwice.count) spans ended twice")
        let requestSpans = spans.filter { $0.parentSpanID == nil }
        #expect(requestSpans.count == total)
        // Many requests got their exchanges out before a cancel (or had none), so the race was run.
        #expect(spans.count - total > total / 2, "\(spans.count - total) exchange spans")
        await session.invalidate()
    }
}

/// Retries a `503` at once, once.
private struct RetryAtOnceOn503: RequestInterceptor {
    func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        request.retryCount == 0 && error.responseCode == 503 ? .retry : .doNotRetry
    }
}
