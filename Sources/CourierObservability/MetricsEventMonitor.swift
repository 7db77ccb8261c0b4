import CoreMetrics
import Courier
import Foundation

/// An event monitor that records every request's metrics with swift-metrics, under
/// OpenTelemetry's names for HTTP clients where it has them.
///
/// | metric | kind | when | dimensions |
/// |---|---|---|---|
/// | `http.client.request.duration` | timer | each attempt and each redirect hop (OpenTelemetry counts every resend as a request) | `http.request.method`, `server.address`, `server.port`, `http.response.status_code` when a response came, `error.type` when the attempt failed |
/// | `http.client.request.body.size` | recorder (bytes) | each attempt or hop that sent a body | method, address, port |
/// | `http.client.response.body.size` | recorder (bytes) | each attempt or hop | method, address, port |
/// | `http.client.active_requests` | meter | from a request's first attempt until it finishes | method, address, port |
/// | `courier.client.requests` | counter | each finished request | method, address, port, `error.type` when it failed |
/// | `courier.client.retries` | counter | each retry decided | method, address, port, `error.type` of the attempt retried |
/// | `courier.client.redirects` | counter | each redirect followed | method, address, port, `http.response.status_code` |
/// | `courier.client.responses` | counter | each attempt or hop | `courier.response_source`: `network`, `cache`, `revalidatedCache` |
///
/// Dimensions never hold a URL, path or query, so their number stays bounded by the hosts,
/// methods, statuses and error kinds a program meets. `courier.client.responses` counts cache
/// hits (`cache`) and revalidations (`revalidatedCache`); `network` counts the rest, misses
/// included, when a cache is on.
///
/// Metrics go to `MetricsSystem`'s factory (bootstrap it once at launch) unless a factory is given.
public final class MetricsEventMonitor: EventMonitor, Sendable {
    /// The queue events arrive on.
    public let queue: DispatchQueue
    private let factory: any MetricsFactory
    /// The requests counted in `http.client.active_requests` (so that each is counted down
    /// once), and what their last attempt's `error.type` was.
    private let attempts = AttemptCounts()

    /// A monitor recording to `factory`, `MetricsSystem.factory` by default.
    ///
    /// - Parameters:
    ///   - factory: Where metrics are made: `MetricsSystem.factory` (what `MetricsSystem.bootstrap`
    ///     set) by default, or a factory of your own, such as MetricsTestKit's `TestMetrics`.
    ///   - queue: The serial queue events are delivered on; a queue of the monitor's own by
    ///     default.
    public init(
        factory: any MetricsFactory = MetricsSystem.factory,
        queue: DispatchQueue = DispatchQueue(label: "Courier.MetricsEventMonitor")
    ) {
        self.factory = factory
        self.queue = queue
    }

    public func request(_ request: Request, didStartAttemptWith urlRequest: URLRequest) {
        guard attempts.start(request.id) else { return }
        Meter(label: "http.client.active_requests", dimensions: Self.server(of: request), factory: factory).increment()
    }

    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        let errorType = Self.errorType(error, status: metrics.statusCode)
        _ = attempts.complete(request.id, errorType: errorType)
        record(metrics, errorType: errorType, server: Self.server(of: request))
    }

    /// One HTTP exchange's duration, body sizes and source: an attempt, or a redirect hop within
    /// one (OpenTelemetry counts each as a request of its own).
    private func record(_ metrics: RequestMetrics, errorType: String?, server: [(String, String)]) {
        var dimensions = server
        if let status = metrics.statusCode { dimensions.append((CourierMetadataKey.statusCode, "\(status)")) }
        if let errorType { dimensions.append((CourierMetadataKey.errorType, errorType)) }
        Timer(label: "http.client.request.duration", dimensions: dimensions, factory: factory)
            .recordNanoseconds(Self.nanoseconds(metrics.duration))
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

    public func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        var dimensions = Self.server(of: request)
        if let errorType = attempts.entry(request.id).lastErrorType {
            dimensions.append((CourierMetadataKey.errorType, errorType))
        }
        Counter(label: "courier.client.retries", dimensions: dimensions, factory: factory).increment()
    }

    public func request(_ request: Request, willFollow redirect: Redirect) {
        let server = Self.server(of: redirect.request)
        record(redirect.metrics, errorType: nil, server: server)
        var dimensions = server
        dimensions.append((CourierMetadataKey.statusCode, "\(redirect.response.statusCode)"))
        Counter(label: "courier.client.redirects", dimensions: dimensions, factory: factory).increment()
    }

    public func requestDidFinish(_ request: Request) {
        let server = Self.server(of: request)
        if attempts.finish(request.id) != nil {
            Meter(label: "http.client.active_requests", dimensions: server, factory: factory).decrement()
        }
        var dimensions = server
        if let error = request.error { dimensions.append((CourierMetadataKey.errorType, error.kind.description)) }
        Counter(label: "courier.client.requests", dimensions: dimensions, factory: factory).increment()
    }

    /// Method, host and port of the request's current head.
    private static func server(of request: Request) -> [(String, String)] {
        guard let head = request.requestHead else { return [] }
        return server(of: head)
    }

    private static func server(of head: RequestHead) -> [(String, String)] {
        let url = head.url
        let scheme = url.scheme?.lowercased()
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return [
            (CourierMetadataKey.method, head.method.rawValue),
            (CourierMetadataKey.serverAddress, url.host?.lowercased() ?? ""),
            (CourierMetadataKey.serverPort, "\(port)"),
        ]
    }

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
