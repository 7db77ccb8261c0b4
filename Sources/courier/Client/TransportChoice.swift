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

    /// A new transport, following at most `maximumRedirects` redirects when `followsRedirects`.
    ///
    /// Only the AsyncHTTPClient transport can be told not to follow: `URLSessionTransport` offers
    /// no setting for it yet, so `--transport urlsession` always follows (as URLSession does).
    func makeTransport(followsRedirects: Bool, maximumRedirects: Int) -> any Transport {
        switch self {
        case .nio:
            let configuration = AsyncHTTPClientTransport.defaultConfiguration()
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
