import Courier
import CourierObservability
import CourierTestServer
import CourierTestSupport
import Foundation
import InMemoryTracing
import Testing
import Tracing

@Suite struct TracingTests {
    /// A span per request under the caller's span, a span per attempt under it, each attempt
    /// carrying its own span's `traceparent` in place of the caller's.
    @Test(arguments: TransportKind.allCases)
    func eachAttemptHasASpanUnderTheRequestsUnderTheCallers(transport: TransportKind) async throws {
        let (tracer, events, monitors) = Self.tracing()
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                interceptor: RetryPolicy(exponentialBackoffScale: 0.01),
                eventMonitors: monitors
            )
            let parent = tracer.startSpan("parent", context: .topLevel, ofKind: .server)
            let url = server.url("/fault/flaky/trace-\(transport)?times=1&status=503")
            let callers = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            let request = ServiceContext.$current.withValue(parent.context) {
                session.request(url, headers: ["traceparent": callers, "tracestate": "caller=1"]).validate()
            }
            #expect(await request.serializingData().response.error == nil)
            parent.end()
            try await events.waitForFinishes(1)

            let spans = tracer.base.finishedSpans
            let parentID = try #require(spans.first { $0.operationName == "parent" }?.spanID)
            let requestSpan = try #require(spans.first { $0.parentSpanID == parentID })
            #expect(requestSpan.operationName == "GET")
            #expect(requestSpan.kind == .client)
            #expect(requestSpan.attributes.get("http.response.status_code") == .int64(200))
            #expect(requestSpan.attributes.get("http.request.method") == .string("GET"))
            #expect(requestSpan.attributes.get("server.address") == .string("127.0.0.1"))
            #expect(requestSpan.attributes.get("server.port") == .int64(Int64(server.port)))
            #expect(requestSpan.attributes.get("url.full") == .string(url.absoluteString))
            #expect(requestSpan.status == nil)
            #expect(requestSpan.events.map(\.name) == ["courier.retry"])

            let attempts = Self.children(of: requestSpan, in: spans)
            try #require(attempts.count == 2, "\(spans.map(\.operationName))")
            #expect(attempts.allSatisfy { $0.kind == .client && $0.operationName == "GET" })
            #expect(attempts[0].attributes.get("http.response.status_code") == .int64(503))
            #expect(attempts[0].attributes.get("error.type") == .string("503"))
            #expect(attempts[0].attributes.get("http.request.resend_count") == nil)
            #expect(attempts[0].status?.code == .error)
            #expect(attempts[1].attributes.get("http.response.status_code") == .int64(200))
            #expect(attempts[1].attributes.get("http.request.resend_count") == .int64(1))
            #expect(attempts[1].attributes.get("error.type") == nil)
            // FoundationNetworking's metrics do not name the protocol; AsyncHTTPClient's do.
            if transport == .asyncHTTPClient {
                #expect(attempts[1].attributes.get("network.protocol.version") == .string("1.1"))
            }
            #expect(attempts[1].status == nil)
            #expect(Set(spans.map(\.traceID)).count == 1)
            #expect(tracer.base.activeSpans.isEmpty)
            #expect(tracer.spansEndedTwice.isEmpty)

            // Each attempt sent its own span's context, once, and no trace state of the caller's.
            let sent = request.performedRequests
            try #require(sent.count == 2)
            for (urlRequest, span) in zip(sent, attempts) {
                #expect(urlRequest.value(forHTTPHeaderField: "traceparent") == W3CTestTracer.traceparent(of: span))
                #expect(urlRequest.value(forHTTPHeaderField: "tracestate") == nil)
            }
            await session.invalidate()
        }
    }

    /// A redirect followed is an exchange of its own (OpenTelemetry counts it as a resend), and
    /// the server sees one `traceparent`, the hop's.
    @Test(arguments: TransportKind.allCases)
    func eachRedirectHopHasASpanAndTheServerSeesOneTraceparent(transport: TransportKind) async throws {
        let (tracer, events, monitors) = Self.tracing()
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(eventMonitors: monitors)
            let url = server.url("/redirect-to?url=/headers&status_code=302")
            let echo = try await session.request(url, headers: ["traceparent": "00-caller-caller-01"])
                .serializingDecodable([String: [String: String]].self).value
            try await events.waitForFinishes(1)
            try Self.checkRedirectSpans(tracer.base.finishedSpans, echo: echo, target: server.url("/headers"))
            #expect(tracer.base.activeSpans.isEmpty)
            #expect(tracer.spansEndedTwice.isEmpty)
            await session.invalidate()
        }
    }

    /// A tracer of the test's own, and the monitors that trace into it and signal each finish.
    private static func tracing() -> (W3CTestTracer, MonitorEvents, [any EventMonitor]) {
        let tracer = W3CTestTracer()
        let events = MonitorEvents()
        return (tracer, events, [TracingEventMonitor(tracer: tracer, queue: events.queue), events.monitor])
    }

    private static func checkRedirectSpans(
        _ spans: [FinishedInMemorySpan],
        echo: [String: [String: String]],
        target: URL
    ) throws {
        let requestSpan = try #require(spans.first { $0.parentSpanID == nil })
        #expect(requestSpan.attributes.get("http.response.status_code") == .int64(200))
        let hops = children(of: requestSpan, in: spans)
        try #require(hops.count == 2, "\(spans.map(\.operationName))")
        #expect(hops[0].attributes.get("http.response.status_code") == .int64(302))
        #expect(hops[0].attributes.get("error.type") == nil)
        #expect(hops[1].attributes.get("http.request.resend_count") == .int64(1))
        #expect(hops[1].attributes.get("url.full") == .string(target.absoluteString))
        #expect(echo["headers"]?["Traceparent"] == W3CTestTracer.traceparent(of: hops[1]))
    }

    /// The spans whose parent is `parent`, in the order they started.
    private static func children(
        of parent: FinishedInMemorySpan,
        in spans: [FinishedInMemorySpan]
    ) -> [FinishedInMemorySpan] {
        spans.filter { $0.parentSpanID == parent.spanID }
            .sorted { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch }
    }

    /// A request that fails has an error status, its `error.type`, and the error recorded; so
    /// has its attempt.
    @Test(arguments: TransportKind.allCases)
    func aFailedRequestsSpansSayWhy(transport: TransportKind) async throws {
        let (tracer, events, monitors) = Self.tracing()
        let closed = try ClosedPort()
        let session = transport.makeSession(eventMonitors: monitors)
        let url = try #require(URL(string: "http://user:secret@127.0.0.1:\(closed.port)/get?token=abc&page=2"))
        #expect(await session.request(url).serializingData().response.error != nil)
        try await events.waitForFinishes(1)
        let spans = tracer.base.finishedSpans
        let requestSpan = try #require(spans.first { $0.parentSpanID == nil })
        #expect(requestSpan.status?.code == .error)
        #expect(requestSpan.attributes.get("error.type") == .string("transportFailed"))
        #expect(requestSpan.errors.count == 1)
        let fullURL = "http://127.0.0.1:\(closed.port)/get?token=REDACTED&page=2"
        #expect(requestSpan.attributes.get("url.full") == .string(fullURL))
        let attempt = try #require(spans.first { $0.parentSpanID == requestSpan.spanID })
        #expect(attempt.status?.code == .error)
        #expect(attempt.attributes.get("error.type") == .string("transportFailed"))
        #expect(attempt.attributes.get("http.response.status_code") == nil)
        #expect(tracer.base.activeSpans.isEmpty)
        await session.invalidate()
    }

    /// Events reach the monitor after the request's next attempt started (here all of them come
    /// once the request is over): each attempt's span still ends with its own answer.
    @Test(arguments: TransportKind.allCases)
    func lateEventsEndEachAttemptWithItsOwnAnswer(transport: TransportKind) async throws {
        let (tracer, events, monitors) = Self.tracing()
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: RetryAtOnce(), eventMonitors: monitors)
            let gate = DispatchSemaphore(value: 0)
            events.queue.async { gate.wait() }
            let url = server.url("/fault/flaky/late-\(transport)?times=1&status=503")
            let response = await session.request(url).validate().serializingData().response
            gate.signal()
            #expect(response.error == nil)
            try await events.waitForFinishes(1)
            let spans = tracer.base.finishedSpans
            let requestSpan = try #require(spans.first { $0.parentSpanID == nil })
            let attempts = Self.children(of: requestSpan, in: spans)
            try #require(attempts.count == 2)
            #expect(attempts[0].attributes.get("http.response.status_code") == .int64(503))
            #expect(attempts[1].attributes.get("http.response.status_code") == .int64(200))
            #expect(attempts[1].status == nil)
            #expect(tracer.base.activeSpans.isEmpty)
            #expect(tracer.spansEndedTwice.isEmpty)
            await session.invalidate()
        }
    }

    /// A challenge answered is an exchange of its own: the `401` ends the first, with its status.
    @Test(arguments: TransportKind.allCases)
    func aChallengeAnsweredIsAnExchangeOfItsOwn(transport: TransportKind) async throws {
        let (tracer, events, monitors) = Self.tracing()
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(eventMonitors: monitors)
            let request = session.request(server.url("/basic-auth/ada/s3cret"))
                .authenticate(username: "ada", password: "s3cret")
                .validate()
            #expect(await request.serializingData().response.error == nil)
            try await events.waitForFinishes(1)
            let spans = tracer.base.finishedSpans
            let requestSpan = try #require(spans.first { $0.parentSpanID == nil })
            #expect(requestSpan.status == nil)
            #expect(requestSpan.attributes.get("http.response.status_code") == .int64(200))
            let exchanges = Self.children(of: requestSpan, in: spans)
            try #require(exchanges.count == 2, "\(spans.map(\.operationName))")
            #expect(exchanges[0].attributes.get("http.response.status_code") == .int64(401))
            #expect(exchanges[0].status?.code == .error)
            #expect(exchanges[1].attributes.get("http.request.resend_count") == .int64(1))
            #expect(exchanges[1].attributes.get("http.response.status_code") == .int64(200))
            #expect(tracer.base.activeSpans.isEmpty)
            #expect(tracer.spansEndedTwice.isEmpty)
            await session.invalidate()
        }
    }

    /// A request that never sends anything (its URL is refused) still has its span, with its error.
    @Test func aRequestThatNeverSentHasASpan() async throws {
        let (tracer, events, monitors) = Self.tracing()
        let session = Session(eventMonitors: monitors)
        #expect(await session.request("ftp://127.0.0.1/file").serializingData().response.error != nil)
        try await events.waitForFinishes(1)
        let span = try #require(tracer.base.finishedSpans.first)
        #expect(tracer.base.finishedSpans.count == 1)
        #expect(span.status?.code == .error)
        #expect(span.attributes.get("error.type") != nil)
        #expect(tracer.base.activeSpans.isEmpty)
    }
}

/// Retries a failed request once, at once.
private struct RetryAtOnce: RequestInterceptor {
    func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        request.retryCount == 0 ? .retry : .doNotRetry
    }
}

/// InMemoryTracer's spans, propagated as W3C `traceparent` (InMemoryTracer's own headers are
/// not W3C's, and `traceparent` is what Courier must not send twice).
struct W3CTestTracer: Tracer {
    let base = InMemoryTracer()
    /// How many times each span (by id) was ended: InMemoryTracer ignores a second end, and
    /// Courier must not make one.
    let ends = TestLock([String: Int]())

    /// The spans ended more than once.
    var spansEndedTwice: [String] { ends.withLock { $0.filter { $0.value > 1 }.map(\.key) } }

    static func traceparent(of span: FinishedInMemorySpan) -> String {
        "00-\(span.traceID)-\(span.spanID)-01"
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> CountingSpan {
        let span = base.startSpan(
            operationName,
            context: context(),
            ofKind: kind,
            at: instant(),
            function: function,
            file: fileID,
            line: line
        )
        return CountingSpan(base: span, ends: ends)
    }

    func forceFlush() {}

    /// An InMemorySpan that counts its ends.
    struct CountingSpan: Tracing.Span {
        let base: InMemorySpan
        let ends: TestLock<[String: Int]>

        var context: ServiceContext { base.context }
        var operationName: String {
            get { base.operationName }
            nonmutating set { base.operationName = newValue }
        }
        var attributes: SpanAttributes {
            get { base.attributes }
            nonmutating set { base.attributes = newValue }
        }
        var isRecording: Bool { base.isRecording }

        func setStatus(_ status: SpanStatus) { base.setStatus(status) }
        func addEvent(_ event: SpanEvent) { base.addEvent(event) }
        func addLink(_ link: SpanLink) { base.addLink(link) }
        func recordError<Instant: TracerInstant>(
            _ error: any Error,
            attributes: SpanAttributes,
            at instant: @autoclosure () -> Instant
        ) {
            base.recordError(error, attributes: attributes, at: instant())
        }
        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
            ends.withLock { $0[base.spanID, default: 0] += 1 }
            base.end(at: instant())
        }
    }

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout ServiceContext,
        using extractor: Extract
    ) where Extract.Carrier == Carrier {}
}

extension TracingTests {
    /// The README's setup, as it shows it, with the tracer this process has (the no-op one).
    @Test func theReadmeSetupWorks() async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(eventMonitors: [TracingEventMonitor()])
            try await withSpan("checkout") { _ in
                _ = try await session.request(server.url("/get")).serializingData().value
            }
            await session.invalidate()
        }
    }
}
