import Courier
import Foundation
import Logging

/// An event monitor that logs every request with swift-log.
///
/// - `.info`: one line when a request finishes: method, URL, status (or the error's kind),
///   duration, attempts and bytes received.
/// - `.debug`: one line per attempt, retry decision and redirect hop, and where each response
///   came from (the network, the cache, or the cache after revalidation).
/// - `.trace`: the request's lifecycle (created, resumed, suspended, cancelled), and each piece of
///   each response body (its size, never its bytes) when made with `logsBodyPieces: true`.
///
/// Every line carries ``CourierMetadataKey`` metadata, starting with the request's id. Headers
/// and bodies are never logged, so neither are credentials or cookies, at any level; URLs are
/// written without their user name and password and with secret query values replaced (see
/// ``URLRedaction``).
///
/// Add it to a session for all its requests, or to one request with
/// `request.eventMonitor(_:)` to log that request with a logger of its own:
///
/// ```swift
/// let session = Session(eventMonitors: [LoggingEventMonitor(logger: Logger(label: "api"))])
/// ```
///
/// The logger's level decides what is built: below `.debug`, an attempt costs a level check and
/// the count of its attempts.
public final class LoggingEventMonitor: EventMonitor, Sendable {
    /// The logger lines go to.
    public let logger: Logger
    /// How URLs are written.
    public let redaction: URLRedaction
    /// The queue events arrive on.
    public let queue: DispatchQueue
    /// Whether each response body piece gets a `.trace` line.
    public let logsBodyPieces: Bool
    private let attempts = AttemptCounts()

    /// A monitor logging to `logger`.
    ///
    /// - Parameters:
    ///   - logger: Where lines go; its level decides which are written.
    ///   - redaction: How URLs are written; ``URLRedaction/commonSecretQueryItemNames`` are
    ///     redacted by default.
    ///   - logsBodyPieces: Whether each piece of each response body gets a `.trace` line with its
    ///     size (an event per piece: off by default, and worth it only while debugging a transfer).
    ///   - queue: The serial queue events are delivered on; by default the one queue
    ///     `CourierObservability`'s monitors share, so that a session with several tells them of
    ///     each event in one block.
    public init(
        logger: Logger,
        redaction: URLRedaction = URLRedaction(),
        logsBodyPieces: Bool = false,
        queue: DispatchQueue = ObservabilityQueue.shared
    ) {
        self.logger = logger
        self.redaction = redaction
        self.logsBodyPieces = logsBodyPieces
        self.queue = queue
    }

    /// Whether the monitor asks for body pieces: when made with `logsBodyPieces` and its logger
    /// writes `.trace` lines.
    public var receivesBodyPieces: Bool { logsBodyPieces && logger.logLevel <= .trace }

    /// Writes a `.trace` line with the piece's size.
    public func request(_ request: Request, didReceiveBodyPieceOf byteCount: Int) {
        guard logger.logLevel <= .trace else { return }
        var (subject, metadata) = subject(request)
        metadata[CourierMetadataKey.bodyPieceSize] = "\(byteCount)"
        logger.trace("\(subject) received \(byteCount) body bytes", metadata: metadata)
    }

    public func requestDidCreate(_ request: Request) { trace("created", request) }
    public func requestDidResume(_ request: Request) { trace("resumed", request) }
    public func requestDidSuspend(_ request: Request) { trace("suspended", request) }
    public func requestDidCancel(_ request: Request) { trace("cancelled", request) }

    /// Does nothing: the response's status is read from the attempt's metrics, so no
    /// `HTTPURLResponse` is built for this monitor.
    public func request(_ request: Request, didReceive head: ResponseHead) {}

    /// Does nothing, so that no `URLRequest` is built for this monitor.
    public func request(_ request: Request, didCreateInitialRequest head: RequestHead) {}
    /// Does nothing, so that no `URLRequest` is built for this monitor.
    public func request(_ request: Request, didCreateRequest head: RequestHead) {}

    public func request(_ request: Request, didStartAttemptWith head: RequestHead) {
        attempts.start(request.id)
    }

    public func request(_ request: Request, didValidateWithError error: CourierError?) {
        if let error { attempts.failedValidation(request.id, errorType: error.kind.description) }
    }

    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        let errorType = MetricsEventMonitor.errorType(error, status: metrics.statusCode)
        let attempt = attempts.complete(request.id, errorType: errorType)
        guard logger.logLevel <= .debug else { return }
        var (subject, metadata) = subject(request)
        let number = attempt.map { "\($0)" } ?? "?"
        if let attempt { metadata[CourierMetadataKey.attempt] = "\(attempt)" }
        metadata[CourierMetadataKey.duration] = "\(Self.seconds(metrics.duration))"
        metadata[CourierMetadataKey.bytesReceived] = "\(metrics.bytesReceived)"
        if let sent = metrics.bytesSent { metadata[CourierMetadataKey.bytesSent] = "\(sent)" }
        metadata[CourierMetadataKey.responseSource] = "\(metrics.responseSource.rawValue)"
        var outcome: String
        if let status = metrics.statusCode {
            metadata[CourierMetadataKey.statusCode] = "\(status)"
            outcome = "\(status)"
        } else {
            outcome = "no response"
        }
        if let errorType { metadata[CourierMetadataKey.errorType] = "\(errorType)" }
        if let error { outcome += ", \(error.kind.description)" }
        if metrics.responseSource != .network { outcome += " from the \(Self.describe(metrics.responseSource))" }
        logger.debug(
            "\(subject) attempt \(number): \(outcome) in \(Self.seconds(metrics.duration)) s",
            metadata: metadata
        )
    }

    public func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        guard logger.logLevel <= .debug else { return }
        var (subject, metadata, next) = retry(request)
        metadata[CourierMetadataKey.attempt] = "\(next - 1)"
        metadata[CourierMetadataKey.retryDelay] = "\(Self.seconds(delay))"
        logger.debug("\(subject) will retry in \(Self.seconds(delay)) s", metadata: metadata)
    }

    /// Every retry, waited for or not (`RetryResult.retry` sends no `willRetryAfter`).
    public func requestIsRetrying(_ request: Request) {
        guard logger.logLevel <= .debug else { return }
        var (subject, metadata, next) = retry(request)
        metadata[CourierMetadataKey.attempt] = "\(next)"
        logger.debug("\(subject) retrying: attempt \(next)", metadata: metadata)
    }

    public func request(_ request: Request, willFollow redirect: Redirect) {
        guard logger.logLevel <= .debug else { return }
        // The hop's own request, not the request's current head: from the second hop on (and
        // after a 303's change of method) they differ.
        var (subject, metadata) = subject(redirect.request, id: request.id.uuidString)
        let location = redaction.string(for: redirect.nextRequest.url)
        metadata[CourierMetadataKey.statusCode] = "\(redirect.response.statusCode)"
        metadata[CourierMetadataKey.redirectLocation] = "\(location)"
        let line =
            "\(subject) redirected (\(redirect.response.statusCode)) to "
            + "\(redirect.nextRequest.method.rawValue) \(location)"
        logger.debug("\(line)", metadata: metadata)
    }

    public func requestDidFinish(_ request: Request) {
        let counted = self.attempts.finish(request.id)?.completed ?? 0
        guard logger.logLevel <= .info else { return }
        var (subject, metadata) = subject(request)
        let metrics = request.allMetrics
        let attempts = max(counted, metrics.count)
        // From the first exchange, a redirect hop's included, to the last.
        let starts = metrics.prefix(1).map(\.startDate) + request.redirects.prefix(1).map(\.metrics.startDate)
        let duration = starts.min().map { start in (metrics.last?.endDate ?? start).timeIntervalSince(start) }
        let bytes = metrics.last?.bytesReceived ?? 0
        metadata[CourierMetadataKey.attempts] = "\(attempts)"
        metadata[CourierMetadataKey.bytesReceived] = "\(bytes)"
        if let duration { metadata[CourierMetadataKey.duration] = "\(Self.seconds(duration))" }
        var outcome: String
        if let status = request.responseHead?.statusCode {
            metadata[CourierMetadataKey.statusCode] = "\(status)"
            outcome = "\(status)"
        } else {
            outcome = "no response"
        }
        if let error = request.error {
            metadata[CourierMetadataKey.errorType] = "\(error.kind.description)"
            outcome += ", failed: \(error.kind.description)"
        }
        if let source = metrics.last?.responseSource {
            metadata[CourierMetadataKey.responseSource] = "\(source.rawValue)"
            if source != .network { outcome += " from the \(Self.describe(source))" }
        }
        var summary = "\(subject) \(outcome)"
        if let duration { summary += " in \(Self.seconds(duration)) s" }
        summary += ", \(attempts) attempt\(attempts == 1 ? "" : "s"), \(bytes) bytes"
        logger.info("\(summary)", metadata: metadata)
    }

    private func trace(_ event: String, _ request: Request) {
        guard logger.logLevel <= .trace else { return }
        let (subject, metadata) = subject(request)
        logger.trace("\(subject) \(event)", metadata: metadata)
    }

    /// How a line names `request` (`GET <redacted URL>`, or its id before it has a head), and the
    /// metadata every line about it carries. The URL is redacted once for both.
    private func subject(_ request: Request) -> (String, Logger.Metadata) {
        let id = request.id.uuidString
        guard let head = request.requestHead else {
            return ("request \(id)", [CourierMetadataKey.requestID: "\(id)"])
        }
        return subject(head, id: id)
    }

    private func subject(_ head: RequestHead, id: String) -> (String, Logger.Metadata) {
        let url = redaction.string(for: head.url)
        let metadata: Logger.Metadata = [
            CourierMetadataKey.requestID: "\(id)",
            CourierMetadataKey.method: "\(head.method.rawValue)",
            CourierMetadataKey.url: "\(url)",
        ]
        return ("\(head.method.rawValue) \(url)", metadata)
    }

    /// The metadata of a retry line: the attempt it makes and why.
    private func retry(_ request: Request) -> (String, Logger.Metadata, next: Int) {
        var (subject, metadata) = subject(request)
        let entry = attempts.entry(request.id)
        if let errorType = entry.lastErrorType { metadata[CourierMetadataKey.errorType] = "\(errorType)" }
        return (subject, metadata, entry.completed + 1)
    }

    private static func describe(_ source: ResponseSource) -> String {
        switch source {
        case .network: return "network"
        case .cache: return "cache"
        case .revalidatedCache: return "cache after revalidation"
        }
    }

    /// Seconds to the millisecond, as logs read them.
    static func seconds(_ interval: TimeInterval) -> String {
        // Whole milliseconds by hand: `String(format:)` costs more on Linux than the rest of a
        // request's line. Clamped, so that no value a clock gives can trap.
        let milliseconds = (interval.isFinite ? max(interval, 0) : 0) * 1000
        let whole = milliseconds < 1e15 ? Int64(milliseconds.rounded()) : 999_999_999_999_999
        let fraction = whole % 1000
        let padding = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
        return "\(whole / 1000).\(padding)\(fraction)"
    }
}
