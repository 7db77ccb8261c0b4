import Courier
import Foundation
import Tracing

/// An event monitor that traces every request with swift-distributed-tracing, under
/// OpenTelemetry's names for HTTP clients, and propagates the trace to the server.
///
/// Each request gets a span of kind `.client` (or the kind you choose), named by its method, whose parent is the span
/// current on the task that made the request (`ServiceContext.current`). Under it, each exchange
/// the request sends (each attempt, each redirect followed, each credential challenge answered)
/// gets a `.client` span of its own, as OpenTelemetry asks for every resend, with
/// `http.request.resend_count` from the second on. Before each exchange goes out, its span's
/// context is injected into its headers by the tracer's instrument (W3C `traceparent` and
/// `tracestate` with OpenTelemetry's): a `traceparent` or `tracestate` the caller set is
/// replaced, never sent twice.
///
/// | attribute | on |
/// |---|---|
/// | `http.request.method` (`_OTHER` for a method outside the standard set, with `http.request.method_original`) | both |
/// | `server.address`, `server.port`, `url.full` (without credentials, secret query values `REDACTED`), `url.scheme` | both |
/// | `http.request.resend_count` | exchanges after the first |
/// | `http.response.status_code` | both, when a response came |
/// | `network.protocol.version` (`1.1`, `2`) | exchanges, when the transport says |
/// | `error.type` (a `CourierError.Kind`, or the status of a `4xx`/`5xx`) | both, on failure |
/// | `courier.response_source` (`cache`, `revalidatedCache`) | exchanges answered by the `HTTPCache` |
///
/// A failed span has status `.error` and the error recorded. The request's span also has an event
/// `courier.retry` (with `courier.retry.delay`, in seconds) for each retry decided, and
/// `courier.cache` (with `courier.response_source`) for each answer from the cache.
///
/// Add it to a session's `eventMonitors`: it is a `RequestContextPropagator`, so the session
/// lets it read the caller's context and set headers. AsyncHTTPClient's own spans are off in
/// `AsyncHTTPClientTransport`'s default configuration, so nothing is traced twice.
///
/// Spans go to `InstrumentationSystem.tracer` (bootstrap it once at launch) unless a tracer is
/// given. With swift-distributed-tracing's `NoOpTracer` (no tracer bootstrapped) it does nothing
/// and costs next to nothing.
public final class TracingEventMonitor: RequestContextPropagator, Sendable {
    /// The queue events arrive on.
    public let queue: DispatchQueue
    private let tracer: any Tracer
    private let redaction: URLRedaction
    private let requestSpanKind: SpanKind
    /// Whether spans go nowhere (no tracer was bootstrapped): then the monitor does nothing.
    private let isNoOp: Bool

    /// A monitor tracing with `tracer`.
    ///
    /// - Parameters:
    ///   - tracer: Where spans go: `InstrumentationSystem.tracer` (what
    ///     `InstrumentationSystem.bootstrap` set) by default, read once, here.
    ///   - redaction: How `url.full` is written: without credentials, and with the values of
    ///     secret query items replaced (``URLRedaction/commonSecretQueryItemNames`` by default).
    ///   - requestSpanKind: The kind of each request's own span, `.client` by default. Its
    ///     exchanges' spans are always `.client`; pass `.internal` if your backend derives
    ///     metrics or a service map from client spans and would count each request twice.
    ///   - queue: The serial queue events are delivered on; by default the one queue
    ///     `CourierObservability`'s monitors share, so that a session with several tells them of
    ///     each event in one block.
    public init(
        tracer: (any Tracer)? = nil,
        redaction: URLRedaction = URLRedaction(),
        requestSpanKind: SpanKind = .client,
        queue: DispatchQueue = ObservabilityQueue.shared
    ) {
        let tracer = tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer
        isNoOp = tracer is NoOpTracer
        self.redaction = redaction
        self.requestSpanKind = requestSpanKind
        self.queue = queue
    }

    // MARK: - Propagation (called synchronously by the session)

    /// Starts the request's span under the caller's current span, as the request is made.
    public func captureContext() -> (any Sendable)? {
        guard !isNoOp else { return nil }
        let parent = ServiceContext.current ?? .topLevel
        // Named once the method is known, at the first exchange.
        return RequestTrace(span: tracer.startSpan("HTTP", context: parent, ofKind: requestSpanKind))
    }

    /// Ends the exchange before (a redirect's or a challenge's), starts this exchange's span, and
    /// injects its context into the exchange's headers.
    public func request(
        _ request: Request,
        willSend head: RequestHead,
        because reason: ExchangeReason,
        headers: inout HTTPHeaders,
        context: (any Sendable)?
    ) {
        guard let trace = context as? RequestTrace else { return }
        let name = Self.spanName(head.method.rawValue)
        let exchange = tracer.startSpan(name, context: trace.span.context, ofKind: .client)
        // Set before the exchange is shared: a finish from now on may fail and end it.
        let attributes = describe(head)
        exchange.attributes = attributes
        let start: RequestTrace.Start
        switch reason {
        case .attempt:
            start = trace.didStart(exchange, startsAttempt: true, describing: attributes, name: name)
        case .redirect(let answer), .challengeAnswer(let answer):
            start = trace.didStart(exchange, startsAttempt: false, describing: attributes, name: name)
            if let previous = start.previous {
                // Its exchange ended with `answer`, which this one follows or answers.
                end(previous, status: answer.statusCode, metrics: nil, error: nil)
            }
        }
        inject(exchange.context, into: &headers)
        // The request finished while this exchange was being made, and its finish event has
        // ended the spans it knew of: this exchange goes nowhere.
        if start.isLate { exchange.end() }
    }

    /// Sets the context's headers, replacing the caller's `traceparent` and `tracestate` when
    /// the instrument writes a `traceparent`, so that one trace, not two, reaches the server.
    private func inject(_ context: ServiceContext, into headers: inout HTTPHeaders) {
        var injected = HTTPHeaders()
        tracer.inject(context, into: &injected, using: HeaderInjector())
        guard !injected.isEmpty else { return }
        if injected.value(for: "traceparent") != nil {
            headers.remove(name: "traceparent")
            headers.remove(name: "tracestate")
        }
        for header in injected { headers.update(header) }
    }

    // MARK: - Events

    /// Does nothing: the status is read from the attempt's metrics, so no `HTTPURLResponse` is
    /// built for this monitor.
    public func request(_ request: Request, didReceive head: ResponseHead) {}
    /// Does nothing, so that no `URLRequest` is built for this monitor.
    public func request(_ request: Request, didCreateInitialRequest head: RequestHead) {}
    /// Does nothing, so that no `URLRequest` is built for this monitor.
    public func request(_ request: Request, didCreateRequest head: RequestHead) {}
    /// Does nothing, so that no `URLRequest` is built for this monitor.
    public func request(_ request: Request, didStartAttemptWith head: RequestHead) {}

    /// Ends the attempt's last exchange span with its answer, status and error.
    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        guard let trace = trace(of: request) else { return }
        // The attempts' events come in order, so this is the oldest attempt's last exchange.
        if let span = trace.completeAttempt(status: metrics.statusCode) {
            end(span, status: metrics.statusCode, metrics: metrics, error: error)
        }
        if metrics.responseSource != .network {
            let source = metrics.responseSource.rawValue
            trace.span.addEvent(
                SpanEvent(name: "courier.cache", attributes: ["courier.response_source": .string(source)])
            )
        }
    }

    /// Adds a `courier.retry` event to the request's span.
    public func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        guard let trace = trace(of: request) else { return }
        let seconds = delay.isFinite ? max(delay, 0) : 0
        trace.span.addEvent(SpanEvent(name: "courier.retry", attributes: ["courier.retry.delay": .double(seconds)]))
    }

    /// Ends what is still open, then the request's span, with its status and error.
    public func requestDidFinish(_ request: Request) {
        guard let trace = trace(of: request) else { return }
        finish(trace, of: request)
    }

    // MARK: - Ending spans

    /// Ends what is still open of `trace` (exchanges cut short by a cancel or the deadline), then
    /// its request's span, once.
    private func finish(_ trace: RequestTrace, of request: Request) {
        guard let (open, status) = trace.finish() else { return }
        let error = request.error
        for span in open {
            if let error { fail(span, error: error, errorType: error.kind.description) }
            span.end()
        }
        let span = trace.span
        if trace.isUnnamed {
            // It never sent an exchange: described by what it built, if anything.
            if let head = request.requestHead {
                span.operationName = Self.spanName(head.method.rawValue)
                span.attributes = describe(head)
            }
        }
        if let status { span.attributes["http.response.status_code"] = status }
        if let error {
            fail(span, error: error, errorType: error.kind.description)
        } else if let status, status >= 400 {
            fail(span, error: nil, errorType: "\(status)")
        }
        span.end()
    }

    /// Ends an exchange's span with its answer: at `metrics`' end when known, else now (an
    /// exchange ended by the next one starting).
    private func end(_ span: any Span, status: Int?, metrics: RequestMetrics?, error: CourierError?) {
        if let status { span.attributes["http.response.status_code"] = status }
        if let version = Self.protocolVersion(metrics?.networkProtocolName) {
            span.attributes["network.protocol.version"] = version
        }
        if let source = metrics?.responseSource, source != .network {
            span.attributes["courier.response_source"] = source.rawValue
        }
        if let errorType = MetricsEventMonitor.errorType(error, status: status) {
            fail(span, error: error, errorType: errorType)
        }
        if let metrics {
            span.end(at: Self.instant(metrics.endDate))
        } else {
            span.end()
        }
    }

    private func fail(_ span: any Span, error: CourierError?, errorType: String) {
        span.attributes["error.type"] = errorType
        if let error { span.recordError(error) }
        span.setStatus(SpanStatus(code: .error))
    }

    private func trace(of request: Request) -> RequestTrace? {
        request.capturedContext(for: self) as? RequestTrace
    }

    // MARK: - Attributes

    private func describe(_ head: RequestHead) -> SpanAttributes {
        var attributes = SpanAttributes()
        let method = head.method.rawValue
        let known = MetricsEventMonitor.method(method)
        attributes["http.request.method"] = known
        if known != method { attributes["http.request.method_original"] = method }
        let url = head.url
        let scheme = url.scheme?.lowercased() ?? ""
        // A `file` URL (read by Courier, not sent) has no server.
        if scheme == "http" || scheme == "https" {
            attributes["server.address"] = url.host?.lowercased() ?? ""
            attributes["server.port"] = url.port ?? (scheme == "https" ? 443 : 80)
        }
        attributes["url.full"] = redaction.string(for: url)
        attributes["url.scheme"] = scheme
        return attributes
    }

    /// A span's name: its method, or `HTTP` for one outside the standard set (OpenTelemetry's
    /// rule, which keeps names few).
    private static func spanName(_ method: String) -> String {
        let known = MetricsEventMonitor.method(method)
        return known == "_OTHER" ? "HTTP" : known
    }

    /// OpenTelemetry's `network.protocol.version` for an ALPN-style protocol name.
    static func protocolVersion(_ name: String?) -> String? {
        switch name?.lowercased() {
        case "http/1.1": "1.1"
        case "http/1.0": "1.0"
        case "h2", "http/2", "http/2.0": "2"
        case "h3", "http/3": "3"
        default: nil
        }
    }

    private static func instant(_ date: Date) -> DefaultTracerClock.Instant {
        let nanoseconds = date.timeIntervalSince1970 * 1e9
        guard nanoseconds.isFinite, nanoseconds > 0 else { return DefaultTracerClock.Instant(nanosecondsSinceEpoch: 0) }
        guard nanoseconds < Double(UInt64.max) else { return DefaultTracerClock.Instant(nanosecondsSinceEpoch: .max) }
        return DefaultTracerClock.Instant(nanosecondsSinceEpoch: UInt64(nanoseconds))
    }
}

/// Writes an instrument's values into Courier's headers, each replacing a header of its name.
private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.update(name: key, value: value)
    }
}
