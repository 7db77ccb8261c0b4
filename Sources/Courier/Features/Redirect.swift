import Foundation

/// One redirect a request followed: the request that was redirected, the `3xx` that answered
/// it, that exchange's metrics, and the request sent next. ``Request/redirects`` lists them in
/// order; event monitors hear of each (``EventMonitor/request(_:willFollow:)``).
///
/// Courier follows redirects itself, identically on both transports, within one attempt (an
/// adapter runs once per attempt, not per redirect; a retry starts again from the first URL):
///
/// | status | method                | next request                                        |
/// |--------|-----------------------|-----------------------------------------------------|
/// | 301, 302 | POST                | GET, without the body and the headers describing it |
/// | 301, 302 | any other           | the same method and body                            |
/// | 303    | any but HEAD          | GET, without the body and the headers describing it |
/// | 303    | HEAD                  | HEAD                                                |
/// | 307, 308 | any                 | the same method and body (a file or stream body is opened again) |
///
/// A body that can be read only once (``RequestBody/stream(readingOnce:length:)``) cannot be
/// sent again: a `307` or `308` for it is the response. To another origin (scheme, host or
/// port), `Authorization`, `Cookie` and `Proxy-Authorization` are left behind. A redirect from
/// `https` to `http`, past the limit (16 by default), or back to a request already made fails
/// the request with ``CourierError/Kind/redirectFailed``; one to a URL Courier will not send to
/// fails it with ``CourierError/Kind/invalidURL``.
public struct Redirect: Sendable {
    /// The most bytes of a redirect's body held while a ``RedirectHandler`` decides; past that
    /// the transfer stops, and a handler that then declines the redirect fails the request with
    /// ``CourierError/Kind/bufferLimitExceeded``. A followed redirect's body is read and dropped.
    public static let maximumHeldBodyBytes = 1 << 20

    /// The request the server redirected.
    public let request: RequestHead
    /// The redirect.
    public let response: ResponseHead
    /// The metrics of that exchange.
    public let metrics: RequestMetrics
    /// The request sent next.
    public let nextRequest: RequestHead
}
