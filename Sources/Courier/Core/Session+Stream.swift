import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    // MARK: - Streaming

    /// A request for `url` whose body you consume as it arrives (see ``DataStreamRequest``).
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - method: The method; `GET` by default.
    ///   - headers: Headers for this request; they win over the session's.
    ///   - automaticallyCancelOnStreamError: Whether a piece a stream serializer fails on cancels
    ///     the request (see ``DataStreamRequest/automaticallyCancelOnStreamError``).
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - shouldAutomaticallyResume: Whether adding the first handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest.
    public func streamRequest(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> DataStreamRequest {
        streamRequest(
            convertible(url, method: method, headers: headers, requestModifier: requestModifier),
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// A streamed request for `url` with `parameters` encoded by `encoder` (into the query for
    /// `GET`, `HEAD` and `DELETE` with the default encoder), as Alamofire's.
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - method: The method; `GET` by default.
    ///   - parameters: An `Encodable` value, such as `["q": "swift"]` or a struct.
    ///   - encoder: Where and how the parameters go.
    ///   - headers: Headers for this request; they win over the session's.
    ///   - automaticallyCancelOnStreamError: Whether a piece a stream serializer fails on cancels
    ///     the request (see ``DataStreamRequest/automaticallyCancelOnStreamError``).
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - shouldAutomaticallyResume: Whether adding the first handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest.
    public func streamRequest<Parameters: Encodable & Sendable>(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> DataStreamRequest {
        streamRequest(
            convertible(url, method: method, headers: headers, requestModifier: requestModifier) {
                try encoder.encode(parameters, into: $0)
            },
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// A streamed request built by `convertible`.
    public func streamRequest(
        _ convertible: any URLRequestConvertible,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil
    ) -> DataStreamRequest {
        register(
            DataStreamRequest(
                convertible: convertible,
                automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
                serializationQueue: serializationQueue,
                eventMonitor: requestEventMonitor,
                interceptor: interceptor,
                session: self
            ),
            automaticallyResuming: shouldAutomaticallyResume
        )
    }
}
