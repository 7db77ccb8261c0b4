import ArgumentParser
import AsyncHTTPClient
import Courier
import CourierNIO

/// `--transport`: which of Courier's transports runs the request.
enum TransportChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// AsyncHTTPClient (the default): follows redirects only with `--follow`.
    case nio
    /// URLSession (FoundationNetworking on Linux): always follows redirects, up to 16.
    case urlsession

    /// A new transport, following at most `maximumRedirects` redirects when `followsRedirects`,
    /// and giving a connection `connectTimeout` seconds to establish (AsyncHTTPClient only: see
    /// ``ClientOptions/attemptTimeout`` for URLSession).
    ///
    /// Only the AsyncHTTPClient transport can be told not to follow: `URLSessionTransport` offers
    /// no setting for it yet, so `--transport urlsession` always follows (as URLSession does).
    func makeTransport(followsRedirects: Bool, maximumRedirects: Int, connectTimeout: Double? = nil) -> any Transport {
        switch self {
        case .nio:
            var configuration = AsyncHTTPClientTransport.defaultConfiguration()
            if let connectTimeout {
                // Validated finite and positive; at most a day, which fits a TimeAmount's nanoseconds.
                configuration.timeout.connect = .nanoseconds(Int64(min(connectTimeout, 86_400) * 1e9))
            }
            // Courier follows redirects itself, checking every Location before connecting to it.
            return AsyncHTTPClientTransport(
                configuration: configuration,
                maximumRedirects: followsRedirects ? maximumRedirects : 0
            )
        case .urlsession:
            return URLSessionTransport()
        }
    }
}
