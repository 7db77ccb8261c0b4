import Courier
import Foundation

/// Prints each attempt of the demo's retried request as it ends, and each retry's delay, so the
/// backoff ``RetryPolicy`` chooses is seen live.
struct AttemptRecorder: EventMonitor {
    /// Where the lines go.
    let printer: DemoPrinter

    func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        let status = metrics.statusCode.map { "HTTP \($0) \(HeadFormatter.reasonPhrase(for: $0))" } ?? "no response"
        printer.result(
            "attempt \(request.retryCount + 1): \(status) after \(String(format: "%.1f", metrics.duration * 1000)) ms"
        )
    }

    func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        printer.note("RetryPolicy waits \(String(format: "%.2f", delay)) s (backoff with jitter), then retries")
    }
}
