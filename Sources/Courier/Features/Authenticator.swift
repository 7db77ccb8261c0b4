import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How an ``AuthenticationInterceptor`` uses and renews one kind of credential: the part of
/// token handling that differs between APIs.
public protocol Authenticator: Sendable {
    /// The credential this authenticator handles.
    associatedtype Credential: AuthenticationCredential

    /// Adds `credential` to `urlRequest`, usually as an `Authorization` header.
    func apply(_ credential: Credential, to urlRequest: inout URLRequest)

    /// Returns a fresh credential in place of `credential`, for example by calling the API's token
    /// endpoint. Throwing fails every request waiting for it. Call the endpoint with a session (or
    /// a request) this interceptor does not serve: a token request that needed a refresh itself
    /// would wait for its own result.
    func refresh(_ credential: Credential, for session: Session) async throws -> Credential

    /// Whether `urlRequest` failed because its credential was refused, so a refresh may help.
    /// By default, a `401` response.
    func didRequest(
        _ urlRequest: URLRequest,
        with response: HTTPURLResponse,
        failDueToAuthenticationError error: CourierError
    ) -> Bool

    /// Whether `urlRequest` was sent with `credential`: if not, the credential was renewed since,
    /// and the request is retried with the new one without another refresh.
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// A `401` response.
    public func didRequest(
        _ urlRequest: URLRequest,
        with response: HTTPURLResponse,
        failDueToAuthenticationError error: CourierError
    ) -> Bool {
        response.statusCode == 401
    }
}
