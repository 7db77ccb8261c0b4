import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body as `Data`; an empty body is an error unless the status or method allows one.
public struct DataResponseSerializer: ResponseSerializer {
    /// Prepares a non-empty body before it is read.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes whose empty body is a valid answer.
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is a valid answer.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer with the given preprocessor and empty-response policy.
    public init(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Serializes the response; see the type for the rules it follows.
    public func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws -> Data {
        try preparedBody(request: request, statusCode: response?.statusCode, data: data, error: error) ?? Data()
    }

    /// Serializes the response; see the type for the rules it follows.
    public func serialize(request: URLRequest?, head: ResponseHead?, data: Data?, error: CourierError?) throws -> Data {
        try preparedBody(request: request, statusCode: head?.statusCode, data: data, error: error) ?? Data()
    }

    /// Serializes reading only the request head's method (for ``emptyRequestMethods``): no
    /// `URLRequest` is built.
    public func serialize(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> Data
    {
        try preparedBody(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error) ?? Data()
    }
}

extension DataResponseSerializerProtocol where Self == DataResponseSerializer {
    /// A ``DataResponseSerializer`` with the default policy: `responseSerializer: .data`.
    public static var data: DataResponseSerializer { DataResponseSerializer() }

    /// A ``DataResponseSerializer``: `responseSerializer: .data(emptyResponseCodes: [200])`.
    public static func data(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponseSerializer {
        DataResponseSerializer(
            dataPreprocessor: dataPreprocessor,
            emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods
        )
    }
}

extension DownloadResponseSerializerProtocol where Self == DataResponseSerializer {
    /// A ``DataResponseSerializer`` with the default policy: `responseSerializer: .data`.
    public static var data: DataResponseSerializer { DataResponseSerializer() }

    /// A ``DataResponseSerializer``: `responseSerializer: .data(emptyResponseCodes: [200])`.
    public static func data(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponseSerializer {
        DataResponseSerializer(
            dataPreprocessor: dataPreprocessor,
            emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods
        )
    }
}
