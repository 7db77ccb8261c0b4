import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a finished request's response, held in memory, into a value.
///
/// Conform to ``ResponseSerializer`` instead (it adds the empty-body policy and a
/// ``DataPreprocessor``, all with defaults, and serializes downloads too) unless your serializer
/// has no use for them.
public protocol DataResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The value produced.
    associatedtype SerializedObject: Sendable

    /// Produces the value from what the request received. `error` is the request's error, if it
    /// failed; serializers rethrow it.
    func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws
        -> SerializedObject

    /// The same, given the response as a ``ResponseHead``. Implement it too when the status and
    /// headers are all you read, so no `HTTPURLResponse` is built for you (see ``ResponseHead``).
    /// By default it builds one and calls the form above.
    func serialize(
        request: URLRequest?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> SerializedObject

    /// The same, given the request as a ``RequestHead``: what Courier calls. Implement it too when
    /// the method, URL and headers are all you read, so that no `URLRequest` is built for you. By
    /// default it builds one and calls the form above.
    func serialize(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> SerializedObject
}

/// Turns a finished request's response into a value: what you write for a format of your own.
///
/// Courier's serializers: ``DataResponseSerializer``, ``StringResponseSerializer``,
/// ``DecodableResponseSerializer`` (`.data`, `.string`, `.decodable(of:)` where a serializer is
/// expected). Throw any error and the handler sees it as
/// ``CourierError/SerializationFailureReason/customSerializationFailed(error:)``. Every response
/// serializer also serializes downloads: the file is read and handed to it as the body
/// (``DownloadResponseSerializerProtocol``).
public protocol ResponseSerializer<SerializedObject>: DataResponseSerializerProtocol,
    DownloadResponseSerializerProtocol
{
    /// Prepares a non-empty body before it is read (by default it hands it on unchanged).
    var dataPreprocessor: any DataPreprocessor { get }
    /// Status codes whose empty body is a valid answer (by default 204 and 205).
    var emptyResponseCodes: Set<Int> { get }
    /// Methods whose empty body is a valid answer (by default `HEAD`).
    var emptyRequestMethods: Set<HTTPMethod> { get }
}

extension DataResponseSerializerProtocol {
    /// Builds the head's `HTTPURLResponse` and calls ``serialize(request:response:data:error:)``:
    /// serializers written against that form keep working.
    public func serialize(
        request: URLRequest?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> SerializedObject
    {
        try serialize(request: request, response: head?.httpURLResponse, data: data, error: error)
    }

    /// Builds the `URLRequest` and calls ``serialize(request:head:data:error:)``: serializers
    /// written against that form keep working.
    public func serialize(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> SerializedObject
    {
        try serialize(request: requestHead?.urlRequest, head: head, data: data, error: error)
    }
}

/// The default sets, made once: every awaited request reads them (a set made per read costs an
/// allocation and the hashing of its members).
private let sharedEmptyResponseCodes: Set<Int> = [204, 205]
private let sharedEmptyRequestMethods: Set<HTTPMethod> = [.head]

extension ResponseSerializer {
    /// ``PassthroughPreprocessor``: the body unchanged.
    public static var defaultDataPreprocessor: any DataPreprocessor { PassthroughPreprocessor() }
    /// 204 No Content and 205 Reset Content.
    public static var defaultEmptyResponseCodes: Set<Int> { sharedEmptyResponseCodes }
    /// `HEAD`.
    public static var defaultEmptyRequestMethods: Set<HTTPMethod> { sharedEmptyRequestMethods }

    /// ``defaultDataPreprocessor``, unless the serializer has its own.
    public var dataPreprocessor: any DataPreprocessor { Self.defaultDataPreprocessor }
    /// ``defaultEmptyResponseCodes``, unless the serializer has its own.
    public var emptyResponseCodes: Set<Int> { Self.defaultEmptyResponseCodes }
    /// ``defaultEmptyRequestMethods``, unless the serializer has its own.
    public var emptyRequestMethods: Set<HTTPMethod> { Self.defaultEmptyRequestMethods }

    /// The body after ``dataPreprocessor``, or `Data()` for an empty body this serializer's
    /// policy allows; rethrows the request's `error`.
    ///
    /// - Throws: `error`, or ``CourierError/SerializationFailureReason/inputDataNilOrZeroLength``,
    ///   or what the preprocessor throws.
    public func bodyData(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws -> Data {
        try preparedBody(request: request, statusCode: response?.statusCode, data: data, error: error) ?? Data()
    }

    /// Whether an empty body is a valid answer for this request and response.
    public func emptyResponseAllowed(request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        emptyResponseAllowed(method: request.flatMap(Self.method(of:)), statusCode: response?.statusCode)
    }

    /// Alamofire's spelling of ``emptyResponseAllowed(request:response:)``.
    public func emptyResponseAllowed(forRequest request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        emptyResponseAllowed(request: request, response: response)
    }

    /// Whether `request`'s method allows an empty body, or `nil` without a request.
    public func requestAllowsEmptyResponseData(_ request: URLRequest?) -> Bool? {
        request.flatMap(Self.method(of:)).map { emptyRequestMethods.contains($0) }
    }

    /// Whether `response`'s status allows an empty body, or `nil` without a response.
    public func responseAllowsEmptyResponseData(_ response: HTTPURLResponse?) -> Bool? {
        response.map { emptyResponseCodes.contains($0.statusCode) }
    }

    /// The body to read: `nil` for an empty body the policy allows, else the non-empty body
    /// after ``dataPreprocessor`` (which may leave it empty). Rethrows the request's `error`.
    func preparedBody(request: URLRequest?, statusCode: Int?, data: Data?, error: CourierError?) throws -> Data? {
        try preparedBody(method: request.flatMap(Self.method(of:)), statusCode: statusCode, data: data, error: error)
    }

    /// ``preparedBody(request:statusCode:data:error:)`` given only the method.
    func preparedBody(method: HTTPMethod?, statusCode: Int?, data: Data?, error: CourierError?) throws -> Data? {
        if let error { throw error }
        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(method: method, statusCode: statusCode) else {
                throw CourierError.responseSerializationFailed(.inputDataNilOrZeroLength)
            }
            return nil
        }
        return try dataPreprocessor.preprocess(data)
    }

    func emptyResponseAllowed(method: HTTPMethod?, statusCode: Int?) -> Bool {
        let methodAllows = method.map { emptyRequestMethods.contains($0) }
        let codeAllows = statusCode.map { emptyResponseCodes.contains($0) }
        return (methodAllows ?? false) || (codeAllows ?? false)
    }

    private static func method(of request: URLRequest) -> HTTPMethod? {
        request.httpMethod.map(HTTPMethod.init(rawValue:))
    }
}

/// Runs `serialize` and times it; an error that is not already a ``CourierError`` becomes a
/// ``CourierError/SerializationFailureReason/customSerializationFailed(error:)``.
func measuredSerialization<Value>(
    _ serialize: () throws -> Value
) -> (result: Result<Value, CourierError>, duration: TimeInterval) {
    let start = DispatchTime.now()
    let result: Result<Value, CourierError>
    do {
        result = .success(try serialize())
    } catch let error as CourierError {
        result = .failure(error)
    } catch {
        result = .failure(.responseSerializationFailed(.customSerializationFailed(error: error)))
    }
    return (result, Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
}
