import Courier
import Foundation

/// Tells the user, on stderr, of each retry `--retry` makes and why: the attempts and delays of
/// Courier's ``RetryPolicy`` are otherwise invisible.
struct RetryReporter: EventMonitor {
    /// Where the lines go.
    let report: @Sendable (String) -> Void

    func request(_ request: Request, willRetryAfter delay: TimeInterval) {
        let attempt = request.retryCount + 1
        let cause: String
        if let status = request.response?.statusCode {
            cause = "HTTP \(status) \(HeadFormatter.reasonPhrase(for: status))"
        } else if let error = request.error, let url = request.lastRequest?.url {
            cause = ErrorMessage.describe(error, url: url)
        } else {
            cause = "failed"
        }
        let retryAfter = request.response?.value(forHTTPHeaderField: "Retry-After").map { ", Retry-After: \($0)" } ?? ""
        report("attempt \(attempt): \(cause)\(retryAfter); retrying in \(String(format: "%.2f", delay)) s\n")
    }
}
