import Foundation

// Alamofire's shorthands for the built-in interceptors: `interceptor: .retryPolicy`,
// `.adapter { … }`. Static members of a protocol constrained to one type, as SE-0299 allows.

extension RequestInterceptor where Self == RetryPolicy {
    /// A ``RetryPolicy`` with the default settings.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A ``RetryPolicy``: `interceptor: .retryPolicy(retryLimit: 5)`.
    public static func retryPolicy(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Double = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: TimeInterval = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes
    ) -> RetryPolicy {
        RetryPolicy(
            retryLimit: retryLimit,
            exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: retryableHTTPStatusCodes,
            retryableURLErrorCodes: retryableURLErrorCodes
        )
    }
}

extension RequestInterceptor where Self == ConnectionLostRetryPolicy {
    /// A ``ConnectionLostRetryPolicy`` with the default settings.
    public static var connectionLostRetryPolicy: ConnectionLostRetryPolicy { ConnectionLostRetryPolicy() }

    /// A ``ConnectionLostRetryPolicy``: `interceptor: .connectionLostRetryPolicy(retryLimit: 3)`.
    public static func connectionLostRetryPolicy(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Double = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: TimeInterval = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) -> ConnectionLostRetryPolicy {
        ConnectionLostRetryPolicy(
            retryLimit: retryLimit,
            exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods
        )
    }
}

extension RequestAdapter where Self == Adapter {
    /// An ``Adapter`` running `closure`: `.adapter { request, session in … }`.
    public static func adapter(using closure: @escaping Interceptor.AdaptHandler) -> Adapter {
        Adapter(closure)
    }
}

extension RequestRetrier where Self == Retrier {
    /// A ``Retrier`` running `closure`: `.retrier { request, session, error in … }`.
    public static func retrier(using closure: @escaping Interceptor.RetryHandler) -> Retrier {
        Retrier(closure)
    }
}

extension RequestInterceptor where Self == Interceptor {
    /// An ``Interceptor`` from an adapting and a retrying closure.
    public static func interceptor(
        adapter: @escaping Interceptor.AdaptHandler,
        retrier: @escaping Interceptor.RetryHandler
    ) -> Interceptor {
        Interceptor(adaptHandler: adapter, retryHandler: retrier)
    }

    /// An ``Interceptor`` from one adapter and one retrier.
    public static func interceptor(adapter: any RequestAdapter, retrier: any RequestRetrier) -> Interceptor {
        Interceptor(adapter: adapter, retrier: retrier)
    }

    /// An ``Interceptor`` composing adapters, retriers and interceptors (see
    /// ``Interceptor/init(adapters:retriers:interceptors:)``).
    public static func interceptor(
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) -> Interceptor {
        Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors)
    }
}
