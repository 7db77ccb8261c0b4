import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Changes each attempt's URLRequest before it is sent: adds a token, signs it, rewrites the host.
///
/// Before every attempt, retries included, a request builds its URLRequest afresh from what the
/// caller gave and runs the adapters on it, so an adapter always starts from what the caller
/// built and may, for example, add a token refreshed since the last attempt. Throwing makes the
/// attempt fail with ``CourierError/Kind/requestAdaptationFailed`` wrapping what was thrown (a
/// ``CourierError`` too, as in Alamofire): the retriers may then try again, as after a token
/// refresh; if none does, the request fails with it.
///
/// Implement ``adapt(_:for:)``; implement ``adapt(_:using:)`` instead when you need to know which
/// request or which attempt is being adapted.
public protocol RequestAdapter: Sendable {
    /// Returns the URLRequest to send in place of `urlRequest`.
    func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest

    /// Returns the URLRequest to send in place of `urlRequest`, knowing the request and attempt.
    /// By default, calls ``adapt(_:for:)``.
    func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState) async throws -> URLRequest
}

extension RequestAdapter {
    /// Calls ``adapt(_:for:)``, for adapters that need no more than the session.
    public func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState) async throws -> URLRequest {
        try await adapt(urlRequest, for: state.session)
    }
}
