import Foundation

extension Session {
    /// A request that runs `delegate`'s operation in place of an HTTP exchange (Siesta's
    /// `Resource.prepareRequest(using:)`): see ``CustomRequestDelegate``.
    ///
    /// The request is a ``DataRequest``: validate it, serialize it, await it, follow its progress
    /// and cancel it as any other. Its retriers (its own `interceptor`, then the session's) may
    /// retry a failure; each retry runs the previous delegate's `repeated()`. Adapters do not
    /// run (nothing is sent), and no redirect, cookie, credential or cache applies.
    ///
    /// - Parameters:
    ///   - delegate: What the request runs.
    ///   - interceptor: Retries this request, before the session's interceptor.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    public func request(
        using delegate: any CustomRequestDelegate,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil
    ) -> DataRequest {
        request(
            using: delegate,
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            usesSessionInterceptor: true
        )
    }

    /// A custom request; without `usesSessionInterceptor`, only its own interceptor retries it.
    func request(
        using delegate: any CustomRequestDelegate,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        usesSessionInterceptor: Bool
    ) -> DataRequest {
        let operation = CustomOperation(delegate, usesSessionInterceptor: usesSessionInterceptor)
        return register(
            DataRequest(
                convertible: operation.head.urlRequest,
                maximumBodySize: configuration.maximumResponseBodySize,
                serializationQueue: serializationQueue,
                eventMonitor: requestEventMonitor,
                interceptor: interceptor,
                session: self,
                customOperation: operation
            ),
            automaticallyResuming: shouldAutomaticallyResume
        )
    }
}
