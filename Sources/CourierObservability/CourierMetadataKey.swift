/// The metadata keys and metric dimensions Courier's monitors use: OpenTelemetry's names for
/// HTTP clients where it has one, `courier.`-prefixed otherwise. They are stable: dashboards and
/// log queries may rely on them.
public enum CourierMetadataKey {
    /// The request's `Request.id`, the same in every line about one request.
    public static let requestID = "courier.request_id"
    /// Which attempt of the request a line is about, from 1.
    public static let attempt = "courier.attempt"
    /// How many attempts the request made.
    public static let attempts = "courier.attempts"
    /// The method, as sent (`GET`).
    public static let method = "http.request.method"
    /// The URL without credentials or secret query values (see ``URLRedaction``).
    public static let url = "url.full"
    /// The host the request went to.
    public static let serverAddress = "server.address"
    /// The port the request went to (the scheme's default when the URL names none).
    public static let serverPort = "server.port"
    /// The response's status code.
    public static let statusCode = "http.response.status_code"
    /// What went wrong: the `CourierError` kind (`transportFailed`, `responseValidationFailed`…).
    public static let errorType = "error.type"
    /// Seconds the request (or the attempt) took.
    public static let duration = "courier.duration"
    /// Response body bytes received.
    public static let bytesReceived = "http.response.body.size"
    /// The size of one piece of a response body, in a `.trace` line per piece.
    public static let bodyPieceSize = "courier.body_piece.size"
    /// Request body bytes sent.
    public static let bytesSent = "http.request.body.size"
    /// Where the response came from: `network`, `cache` or `revalidatedCache`.
    public static let responseSource = "courier.response_source"
    /// Seconds a retry waits before its next attempt.
    public static let retryDelay = "courier.retry_delay"
    /// Where a redirect leads (redacted like ``url``).
    public static let redirectLocation = "courier.redirect.location"
}
