import Courier
import CourierNIO
import Foundation
import Testing

/// The transports every behaviour test runs on.
enum TransportKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case urlSession
    case asyncHTTPClient

    var testDescription: String { rawValue }

    /// Whether URLSession here is FoundationNetworking (Linux), with its libcurl limits.
    static var urlSessionIsFoundationNetworking: Bool {
        #if canImport(FoundationNetworking)
        return true
        #else
        return false
        #endif
    }

    /// A new transport of this kind, owned by the test.
    func makeTransport() -> any Transport {
        switch self {
        case .urlSession: return URLSessionTransport()
        case .asyncHTTPClient: return AsyncHTTPClientTransport()
        }
    }

    /// A session over a new transport of this kind.
    func makeSession(
        _ configure: (inout Session.Configuration) -> Void = { _ in },
        interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = []
    )
        -> Session
    {
        Session(
            configuration: Session.Configuration(configure),
            transport: makeTransport(),
            interceptor: interceptor,
            eventMonitors: eventMonitors
        )
    }
}
