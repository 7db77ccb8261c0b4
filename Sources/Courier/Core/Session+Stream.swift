import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    // MARK: - Streaming

    /// A request for `url` whose body you consume as it arrives (see ``DataStreamRequest``).
    public func streamRequest(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> DataStreamRequest {
        streamRequest(
            convertible(url, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor
        )
    }

    /// A streamed request built by `convertible`.
    public func streamRequest(
        _ convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil
    ) -> DataStreamRequest {
        register(
            DataStreamRequest(
                convertible: convertible,
                serializationQueue: serializationQueue,
                eventMonitor: requestEventMonitor,
                interceptor: interceptor,
                session: self
            )
        )
    }
}
