import CoreMetrics
import Courier
import Foundation

/// An event monitor that records every request's metrics with swift-metrics, under
/// OpenTelemetry's names for HTTP clients where it has them.
///
/// | metric | kind | when | dimensions |
/// |---|---|---|---|
/// | `http.client.request.duration` | timer (shown in seconds) | each attempt and each redirect hop (OpenTelemetry counts every resend as a request) | `http.request.method`, `server.address`, `server.port`, `http.response.status_code`, `error.type` |
/// | `http.client.request.body.size` | recorder (bytes) | each attempt or hop that sent a body | method, address, port |
/// | `http.client.response.body.size` | recorder (bytes) | each attempt or hop | method, address, port |
/// | `http.client.active_requests` | meter | from a request's first attempt until it finishes | method, address, port |
/// | `courier.client.requests` | counter | each finished request | method, address, port, `error.type` |
/// | `courier.client.retries` | counter | each retry, waited for or not | method, address, port, `error.type` of the attempt retried (or of its failed validation) |
/// | `courier.client.redirects` | counter | each redirect followed | method, address, port, `http.response.status_code` |
/// | `courier.client.responses` | counter | each attempt or hop | `courier.response_source`: `network`, `cache`, `revalidatedCache` |
///
/// Each metric always has the same dimension names, an empty value where one does not apply (no
/// status for a failed connection, no `error.type` for a success), since some backends
/// (Prometheus) refuse a metric whose label names change. Dimensions never hold a URL, path or
/// query, and methods other than the standard ones are `_OTHER`, so the number of series stays
/// bounded by the hosts, statuses and error kinds a program meets. An attempt cut short by a
/// cancel or the request's deadline has no duration recorded: Courier reports no completion for
/// it. `courier.client.responses` counts cache
/// hits (`cache`) and revalidations (`revalidatedCache`); `network` counts the rest, misses
/// included, when a cache is on.
///
/// Metrics go to `MetricsSystem`'s factory (bootstrap it once at launch) unless a factory is given.
public final class MetricsEventMonitor: EventMonitor, Sendable {
    /// The queue events arrive on.
    public let queue: DispatchQueue
    private let factory: any MetricsFactory
    /// The requests counted in `http.client.active_requests` (so that each is counted down
    /// once, under the same dimensions), and what their last attempt's `error.type` was.
    private let attempts = AttemptCounts()
    private let meters = MeterCache()

    /// A monitor recording to `factory`, `MetricsSystem.factory` by default.
    ///
    /// - Parameters:
    ///   - factory: Where metrics are made: `MetricsSystem.factory` (what `MetricsSystem.bootstrap`
    ///     set) by default, or a factory of your own, such as MetricsTestKit's `TestMetrics`.
    ///   - queue: The serial queue events are delivered on; by default the one queue
    ///     `CourierObservability`'s monitors share, so that a session with several tells them of
    ///     each event in one block.
    public init(
        factory: any MetricsFactory = MetricsSystem.factory,
        queue: DispatchQueue = ObservabilityQueue.shared
    ) {
        self.factory = factory
        self.queue = queue
    }

    /// Does nothing: the response's status is read from the attempt's metrics, so no
    /// `HTTPURLResponse` is built for this monitor.
    public func request(_ request: Request, didReceive head: ResponseHead) {}

    /// Does nothing, so that no `URLRequest` is built for this monitor.
    public func request(_ request: Request, didCreateInitialRequest head: RequestHead) {}
    /// Does nothing, so that no `URLRequest` is built for this monitor.
    public func request(_ request: Request, didCreateRequest head: RequestHead) {}

    public func request(_ request: Request, didStartAttemptWith head: RequestHead) {
        let server = Self.server(of: head)
        guard attempts.start(request.id, dimensions: server) else {
            return
        }
        activeRequests(server).increment()
    }

    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        let errorType = Self.errorType(error, status: metrics.statusCode)
        _ = attempts.complete(request.id, errorType: errorType)
        record(metrics, errorType: errorType, server: Self.server(of: request))
    }

    public func request(_ request: Request, didValidateWithError error: CourierError?) {
        if let error { attempts.failedValidation(request.id, errorType: error.kind.description) }
    }

    /// One HTTP exchange's duration, body sizes and source: an attempt, or a redirect hop within
    /// one (OpenTelemetry counts each as a request of its own).
    private func record(_ metrics: RequestMetrics, errorType: String?, server: [(String, String)]) {
        let dimensions =
            server + [
                (CourierMetadataKey.statusCode, metrics.statusCode.map { "\($0)" } ?? ""),
                (CourierMetadataKey.errorType, errorType ?? ""),
            ]
        Timer(
            label: "http.client.request.duration",
            dimensions: dimensions,
            preferredDisplayUnit: .seconds,
            factory: factory
        ).recordNanoseconds(Self.nanoseconds(metrics.duration))
        if let sent = metrics.bytesSent, sent > 0 {
            Recorder(label: "http.client.request.body.size", dimensions: server, factory: factory).record(sent)
        }
        Recorder(label: "http.client.response.body.size", dimensions: server, factory: factory)
            .record(metrics.bytesReceived)
        Counter(
            label: "courier.client.responses",
            dimensions: [(CourierMetadataKey.responseSource, metrics.responseSource.rawValue)],
            factory: factory
        ).increment()
    }

    /// Every retry, whether it waits first or not (`RetryResult.retry` does not).
    public func requestIsRetrying(_ request: Request) {
        let reason = attempts.entry(request.id).lastErrorType ?? ""
        let dimensions = Self.server(of: request) + [(CourierMetadataKey.errorType, reason)]
        Counter(label: "courier.client.retries", dimensions: dimensions, factory: factory).increment()
    }

    public func request(_ request: Request, willFollow redirect: Redirect) {
        let server = Self.server(of: redirect.request)
        record(redirect.metrics, errorType: nil, server: server)
        let dimensions = server + [(CourierMetadataKey.statusCode, "\(redirect.response.statusCode)")]
        Counter(label: "courier.client.redirects", dimensions: dimensions, factory: factory).increment()
    }

    public func requestDidFinish(_ request: Request) {
        // Counted down under the dimensions it was counted up under: an adapter may have moved a
        // retry to another host since.
        if let entry = attempts.finish(request.id) { activeRequests(entry.dimensions).decrement() }
        let dimensions =
            Self.server(of: request) + [(CourierMetadataKey.errorType, request.error?.kind.description ?? "")]
        Counter(label: "courier.client.requests", dimensions: dimensions, factory: factory).increment()
    }

    /// The meter of requests active under `dimensions`: one object per set, since a factory
    /// without meters of its own keeps the value in the object.
    private func activeRequests(_ dimensions: [(String, String)]) -> Meter {
        meters.meter(for: dimensions) {
            Meter(label: "http.client.active_requests", dimensions: dimensions, factory: factory)
        }
    }

    /// Method, host and port of the request's current head; empty values when it has none yet.
    private static func server(of request: Request) -> [(String, String)] {
        guard let head = request.requestHead else {
            return [
                (CourierMetadataKey.method, ""), (CourierMetadataKey.serverAddress, ""),
                (CourierMetadataKey.serverPort, ""),
            ]
        }
        return server(of: head)
    }

    private static func server(of head: RequestHead) -> [(String, String)] {
        let url = head.url
        let scheme = url.scheme?.lowercased()
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return [
            (CourierMetadataKey.method, method(head.method.rawValue)),
            (CourierMetadataKey.serverAddress, url.host?.lowercased() ?? ""),
            (CourierMetadataKey.serverPort, "\(port)"),
        ]
    }

    /// The methods OpenTelemetry names as they are; any other is `_OTHER`, so that a program
    /// sending made-up methods cannot grow the number of series.
    static func method(_ name: String) -> String {
        knownMethods.contains(name) ? name : "_OTHER"
    }

    private static let knownMethods: Set<String> = [
        "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY", "TRACE",
    ]

    /// An attempt's `error.type`, as OpenTelemetry defines it for HTTP clients: the error's kind,
    /// else the status code of a `4xx` or `5xx` answer, else none.
    static func errorType(_ error: CourierError?, status: Int?) -> String? {
        if let error { return error.kind.description }
        if let status, status >= 400 { return "\(status)" }
        return nil
    }

    /// `interval` in whole nanoseconds, clamped so that no value a clock gives can trap.
    static func nanoseconds(_ interval: TimeInterval) -> Int64 {
        let value = interval * 1e9
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(Int64.max) ? Int64.max : Int64(value)
    }
}

/// One `Meter` object per set of dimensions.
///
/// `@unchecked Sendable`: `meters` is read and written only under `lock`.
private final class MeterCache: @unchecked Sendable {
    private let lock = NSLock()
    private var meters: [[String]: Meter] = [:]

    /// The meter for `dimensions`, whose names are always the same (one metric's), so their
    /// values alone tell series apart.
    func meter(for dimensions: [(String, String)], make: () -> Meter) -> Meter {
        let key = dimensions.map(\.1)
        return lock.withLock {
            if let meter = meters[key] { return meter }
            let meter = make()
            meters[key] = meter
            return meter
        }
    }
}
