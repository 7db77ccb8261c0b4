import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `Courier.request(...)`: requests on `Session.default`, as Alamofire 4's `Alamofire.request(...)`
// read. Module-level functions are what make the module-qualified spelling work.

/// A request on ``Session/default``; see ``Session/request(_:method:parameters:encoder:headers:interceptor:shouldAutomaticallyResume:requestModifier:)``.
public func request<Parameters: Encodable & Sendable>(
    _ url: any URLConvertible,
    method: HTTPMethod = .get,
    parameters: Parameters?,
    encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
    headers: HTTPHeaders? = nil,
    interceptor: (any RequestInterceptor)? = nil,
    shouldAutomaticallyResume: Bool? = nil,
    requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
) -> DataRequest {
    Session.default.request(
        url,
        method: method,
        parameters: parameters,
        encoder: encoder,
        headers: headers,
        interceptor: interceptor,
        shouldAutomaticallyResume: shouldAutomaticallyResume,
        requestModifier: requestModifier
    )
}

/// A request on ``Session/default`` with a ``Parameters`` dictionary encoded by `encoding`.
@_disfavoredOverload
public func request(
    _ url: any URLConvertible,
    method: HTTPMethod = .get,
    parameters: Parameters?,
    encoding: any ParameterEncoding = URLEncoding.default,
    headers: HTTPHeaders? = nil,
    interceptor: (any RequestInterceptor)? = nil,
    shouldAutomaticallyResume: Bool? = nil,
    requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
) -> DataRequest {
    Session.default.request(
        url,
        method: method,
        parameters: parameters,
        encoding: encoding,
        headers: headers,
        interceptor: interceptor,
        shouldAutomaticallyResume: shouldAutomaticallyResume,
        requestModifier: requestModifier
    )
}

/// A request on ``Session/default`` without parameters.
public func request(
    _ url: any URLConvertible,
    method: HTTPMethod = .get,
    headers: HTTPHeaders? = nil,
    interceptor: (any RequestInterceptor)? = nil,
    shouldAutomaticallyResume: Bool? = nil,
    requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
) -> DataRequest {
    Session.default.request(
        url,
        method: method,
        headers: headers,
        interceptor: interceptor,
        shouldAutomaticallyResume: shouldAutomaticallyResume,
        requestModifier: requestModifier
    )
}

/// A request on ``Session/default`` built by `convertible`.
public func request(
    _ convertible: any URLRequestConvertible,
    interceptor: (any RequestInterceptor)? = nil,
    shouldAutomaticallyResume: Bool? = nil
) -> DataRequest {
    Session.default.request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
}
