/// The process's exit codes, and the rule for `--check-status`.
enum ExitStatus {
    /// Success.
    static let success: Int32 = 0
    /// The request failed: no connection, a timeout, an unreadable file…
    static let failure: Int32 = 1
    /// The arguments are wrong.
    static let usage: Int32 = 2

    /// The exit code for a response with `statusCode`, and why, when `--check-status` asks
    /// (3, 4, 5 for 3xx, 4xx, 5xx); `nil` when the status is a success. A 3xx counts only when
    /// redirects were not being followed: a followed chain ends elsewhere.
    static func checked(statusCode: Int, reason: String, followsRedirects: Bool) -> (code: Int32, message: String)? {
        let message = "HTTP \(statusCode) \(reason)"
        switch statusCode {
        case 300..<400 where !followsRedirects:
            return (3, "\(message) (a redirect; --follow follows it)")
        case 400..<500: return (4, "\(message) (a client error)")
        case 500..<600: return (5, "\(message) (a server error)")
        default: return nil
        }
    }
}
