import Foundation

/// Why an ``AuthenticationInterceptor`` could not authenticate a request. It reaches the caller
/// inside ``CourierError/Kind/requestAdaptationFailed`` or ``CourierError/Kind/requestRetryFailed``,
/// as the error's ``CourierError/underlyingError``.
///
/// Compare with the static members (`error.underlyingError as? AuthenticationError == .excessiveRefresh`).
/// A struct rather than an enum so new reasons can be added without breaking a `switch` in your code.
public struct AuthenticationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A fixed short name for the reason, safe for logs and metric labels.
    public let description: String

    private init(_ description: String) {
        self.description = description
    }

    /// The interceptor has no credential to add.
    public static let missingCredential = AuthenticationError("missingCredential")
    /// The credential was refreshed more often than the ``AuthenticationInterceptor/RefreshWindow``
    /// allows: the server keeps refusing fresh credentials, so refreshing again would loop.
    public static let excessiveRefresh = AuthenticationError("excessiveRefresh")
    /// The ``Authenticator`` implements neither form of `refresh`.
    public static let refreshNotImplemented = AuthenticationError("refreshNotImplemented")
}
