import ArgumentParser
import AsyncHTTPClient
import Courier
import CourierNIO

/// `--transport`: which of Courier's transports runs the request.
enum TransportChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// AsyncHTTPClient (the default).
    case nio
    /// URLSession (FoundationNetworking on Linux).
    case urlsession

    /// A new transport, giving a connection `connectTimeout` seconds to establish
    /// (AsyncHTTPClient only: see ``ClientOptions/attemptTimeout`` for URLSession). Redirects are
    /// the session's business, the same over both (`--follow`, `--max-redirects`).
    func makeTransport(connectTimeout: Double? = nil) -> any Transport {
        switch self {
        case .nio:
            var configuration = AsyncHTTPClientTransport.defaultConfiguration()
            if let connectTimeout {
                // Validated finite and positive; at most a day, which fits a TimeAmount's nanoseconds.
                configuration.timeout.connect = .nanoseconds(Int64(min(connectTimeout, 86_400) * 1e9))
            }
            return AsyncHTTPClientTransport(configuration: configuration)
        case .urlsession:
            return URLSessionTransport()
        }
    }
}
