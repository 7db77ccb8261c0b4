import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Marks a type that stands for "no body": ``DecodableResponseSerializer`` returns ``emptyValue()``
/// for an empty response instead of failing.
public protocol EmptyResponse: Sendable {
    /// The value for an empty body.
    static func emptyValue() -> Self
}

/// A `Decodable` value for responses that carry no body, such as `204 No Content`.
public struct Empty: Codable, Sendable, Hashable, EmptyResponse {
    /// The one value.
    public static let value = Empty()

    public static func emptyValue() -> Empty { value }
}

/// A decoder that reads values from `Data`, such as `JSONDecoder` or `PropertyListDecoder`.
///
/// Sendable, because one decoder value serves every response it is given to, possibly at once:
/// `JSONDecoder` and `PropertyListDecoder` may be shared so. For a decoder that must not be, give
/// ``DecodableResponseSerializer`` a function that makes one per response
/// (`DecodableResponseSerializer(decoder: { MyDecoder() })`).
public protocol DataDecoder: Sendable {
    /// Decodes a `T` from `data`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}

/// A `Decodable` value, decoded from the body by a `JSONDecoder` (or any decoder you give).
///
/// An empty body that the status or method allows (204, 205, `HEAD`) gives the type's
/// ``EmptyResponse/emptyValue()`` (``Empty`` for "no body expected"); for a type that has none,
/// it fails with ``CourierError/SerializationFailureReason/invalidEmptyResponse(type:)``.
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ResponseSerializer {
    /// Where each response's decoder comes from.
    private enum DecoderSource: Sendable {
        case shared(any DataDecoder)
        case made(@Sendable () -> any DataDecoder)
    }

    private let decoderSource: DecoderSource
    /// Prepares a non-empty body before it is read.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes whose empty body is a valid answer.
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is a valid answer.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// The decoder used for responses (made afresh on each read when the serializer was given a
    /// function that makes one).
    public var decoder: any DataDecoder {
        switch decoderSource {
        case .shared(let decoder): return decoder
        case .made(let make): return make()
        }
    }

    /// Creates a serializer that decodes every response with `decoder` (a `JSONDecoder` by default).
    public init(
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.decoderSource = .shared(decoder)
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Creates a serializer that makes a decoder for each response with `makeDecoder`: for a
    /// decoder that is not safe to share between responses decoded at once.
    public init(
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer.defaultDataPreprocessor,
        decoder makeDecoder: @escaping @Sendable () -> any DataDecoder,
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.decoderSource = .made(makeDecoder)
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
    ) throws -> T {
        try serialize(request: request, head: response.map(ResponseHead.init), data: data, error: error)
    }

    /// Serializes the response; see the type for the rules it follows.
    public func serialize(request: URLRequest?, head: ResponseHead?, data: Data?, error: CourierError?) throws -> T {
        try value(of: preparedBody(request: request, statusCode: head?.statusCode, data: data, error: error))
    }

    /// Serializes reading only the request head's method (for ``emptyRequestMethods``): no
    /// `URLRequest` is built.
    public func serialize(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> T
    {
        try value(
            of: preparedBody(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error)
        )
    }

    /// The value decoded from `data`, or the empty value for an allowed empty body (`nil`).
    private func value(of data: Data?) throws -> T {
        guard let data else {
            guard let empty = T.self as? any EmptyResponse.Type, let value = empty.emptyValue() as? T else {
                throw CourierError.responseSerializationFailed(.invalidEmptyResponse(type: "\(T.self)"))
            }
            return value
        }
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw CourierError.responseSerializationFailed(.decodingFailed(error: error))
        }
    }
}

extension DataResponseSerializerProtocol {
    /// A ``DecodableResponseSerializer``: `serializingResponse(using: .decodable(of: User.self))`.
    public static func decodable<T: Decodable & Sendable>(
        of type: T.Type,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DecodableResponseSerializer<T> where Self == DecodableResponseSerializer<T> {
        DecodableResponseSerializer<T>(
            dataPreprocessor: dataPreprocessor,
            decoder: decoder,
            emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods
        )
    }
}

extension DownloadResponseSerializerProtocol {
    /// A ``DecodableResponseSerializer``: `serializingResponse(using: .decodable(of: User.self))`.
    public static func decodable<T: Decodable & Sendable>(
        of type: T.Type,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DecodableResponseSerializer<T> where Self == DecodableResponseSerializer<T> {
        DecodableResponseSerializer<T>(
            dataPreprocessor: dataPreprocessor,
            decoder: decoder,
            emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods
        )
    }
}
