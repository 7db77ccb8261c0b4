import Foundation

/// Why an ``AuthenticationInterceptor`` could not authenticate a request. It reaches the caller
/// inside ``CourierError/Kind/requestAdaptationFailed`` or ``CourierError/Kind/requestRetryFailed``,
/// as the error's ``CourierError/underlyingError``.
public enum AuthenticationError: Error, Sendable, Equatable {
    /// The interceptor has no credential to add.
    case missingCredential
    /// The credential was refreshed more often than the ``AuthenticationInterceptor/RefreshWindow``
    /// allows: the server keeps refusing fresh credentials, so refreshing again would loop.
    case excessiveRefresh
}
