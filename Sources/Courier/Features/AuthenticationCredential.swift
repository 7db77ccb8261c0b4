import Foundation

/// A credential an ``AuthenticationInterceptor`` adds to requests, such as an OAuth token.
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before it is used, typically because it expires
    /// soon; the interceptor then refreshes it before sending the request, rather than after a `401`.
    var requiresRefresh: Bool { get }
}
