import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a finished request's response into a value.
///
/// Courier's serializers: ``DataResponseSerializer``, ``StringResponseSerializer``,
/// ``DecodableResponseSerializer``. Write your own for other formats; throw any error and the
/// handler sees it as ``CourierError/SerializationFailureReason/customSerializationFailed(error:)``.
public protocol ResponseSerializer<SerializedObject>: Sendable {
    /// The value produced.
    associatedtype SerializedObject: Sendable

    /// Status codes whose empty body is a valid answer (by default 204 and 205).
    var emptyResponseCodes: Set<Int> { get }
    /// Methods whose empty body is a valid answer (by default `HEAD`).
    var emptyRequestMethods: Set<HTTPMethod> { get }

    /// Produces the value from what the request received. `error` is the request's error, if it
    /// failed; serializers rethrow it.
    func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws
        -> SerializedObject

    /// The same, given the response as a ``ResponseHead``: what Courier calls. Implement it too
    /// when the status and headers are all you read, so no `HTTPURLResponse` is built for you
    /// (see ``ResponseHead``). By default it builds one and calls the form above.
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

extension ResponseSerializer {
    /// 204 No Content and 205 Reset Content.
    public static var defaultEmptyResponseCodes: Set<Int> { [204, 205] }
    /// `HEAD`.
    public static var defaultEmptyRequestMethods: Set<HTTPMethod> { [.head] }

    public var emptyResponseCodes: Set<Int> { Self.defaultEmptyResponseCodes }
    public var emptyRequestMethods: Set<HTTPMethod> { Self.defaultEmptyRequestMethods }

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

    /// The body, or `Data()` for an empty body this serializer's policy allows; rethrows the
    /// request's `error`.
    ///
    /// - Throws: `error`, or ``CourierError/SerializationFailureReason/inputDataNilOrZeroLength``.
    public func bodyData(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws -> Data {
        try bodyData(request: request, statusCode: response?.statusCode, data: data, error: error)
    }

    /// Whether an empty body is a valid answer for this request and response.
    public func emptyResponseAllowed(request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        emptyResponseAllowed(request: request, statusCode: response?.statusCode)
    }

    /// ``bodyData(request:response:data:error:)`` given only the status code.
    func bodyData(request: URLRequest?, statusCode: Int?, data: Data?, error: CourierError?) throws -> Data {
        try bodyData(
            method: request?.httpMethod.map(HTTPMethod.init(rawValue:)),
            statusCode: statusCode,
            data: data,
            error: error
        )
    }

    /// ``bodyData(request:response:data:error:)`` given only the method and the status code.
    func bodyData(method: HTTPMethod?, statusCode: Int?, data: Data?, error: CourierError?) throws -> Data {
        if let error { throw error }
        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(method: method, statusCode: statusCode) else {
                throw CourierError.responseSerializationFailed(.inputDataNilOrZeroLength)
            }
            return Data()
        }
        return data
    }

    func emptyResponseAllowed(request: URLRequest?, statusCode: Int?) -> Bool {
        emptyResponseAllowed(method: request?.httpMethod.map(HTTPMethod.init(rawValue:)), statusCode: statusCode)
    }

    func emptyResponseAllowed(method: HTTPMethod?, statusCode: Int?) -> Bool {
        let methodAllows = method.map { emptyRequestMethods.contains($0) }
        let codeAllows = statusCode.map { emptyResponseCodes.contains($0) }
        return (methodAllows ?? false) || (codeAllows ?? false)
    }
}

/// The body as `Data`; an empty body is an error unless the status or method allows one.
public struct DataResponseSerializer: ResponseSerializer {
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer with the given empty-response policy.
    public init(
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    public func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws -> Data {
        try bodyData(request: request, response: response, data: data, error: error)
    }

    public func serialize(request: URLRequest?, head: ResponseHead?, data: Data?, error: CourierError?) throws -> Data {
        try bodyData(request: request, statusCode: head?.statusCode, data: data, error: error)
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
        try bodyData(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error)
    }
}

/// The body as text, in the charset the response names, else UTF-8, else ISO-8859-1.
public struct StringResponseSerializer: ResponseSerializer {
    /// The encoding to use whatever the response says, or `nil` to follow the response.
    public let encoding: String.Encoding?
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer.
    ///
    /// - Parameter encoding: Forces an encoding; by default the response's `charset`, or UTF-8
    ///   when it names none (ISO-8859-1 if the body is not valid UTF-8, as HTTP/1.1 once defaulted).
    public init(
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    public func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws
        -> String
    {
        try serialize(request: request, head: response.map(ResponseHead.init), data: data, error: error)
    }

    public func serialize(
        request: URLRequest?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> String
    {
        try text(of: bodyData(request: request, statusCode: head?.statusCode, data: data, error: error), head: head)
    }

    /// Serializes reading only the request head's method (for ``emptyRequestMethods``): no
    /// `URLRequest` is built.
    public func serialize(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> String
    {
        try text(
            of: bodyData(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error),
            head: head
        )
    }

    /// The body as text, in the encoding given, else the one `head` names, else UTF-8 or ISO-8859-1.
    private func text(of data: Data, head: ResponseHead?) throws -> String {
        let named = encoding ?? head?.textEncodingName.flatMap(String.Encoding.courier(ianaCharsetName:))
        if let named {
            guard let text = String(data: data, encoding: named) else {
                throw CourierError.responseSerializationFailed(.stringSerializationFailed(encoding: named))
            }
            return text
        }
        if let text = String(data: data, encoding: .utf8) { return text }
        // ISO-8859-1 maps every byte to the code point of the same value, so this never fails.
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: data.map { Unicode.Scalar($0) })
        return String(scalars)
    }
}

/// Marks a type that stands for "no body": ``DecodableResponseSerializer`` returns ``emptyValue()``
/// for an empty response instead of failing.
public protocol EmptyResponse: Sendable {
    /// The value for an empty body.
    static func emptyValue() -> Self
}

/// A `Decodable` value for responses that carry no body, such as `204 No Content`.
public struct Empty: Codable, Sendable, Equatable, EmptyResponse {
    /// The one value.
    public static let value = Empty()

    public static func emptyValue() -> Empty { value }
}

/// A `Decodable` value, decoded from the body by a `JSONDecoder` (or any decoder you give).
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ResponseSerializer {
    private let makeDecoder: @Sendable () -> any DataDecoder
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer.
    ///
    /// - Parameter decoder: Makes the decoder, once per response (decoders are mutable classes);
    ///   a plain `JSONDecoder` by default.
    public init(
        decoder: @escaping @Sendable () -> any DataDecoder = { JSONDecoder() },
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.makeDecoder = decoder
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    public func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws -> T {
        try serialize(request: request, head: response.map(ResponseHead.init), data: data, error: error)
    }

    public func serialize(request: URLRequest?, head: ResponseHead?, data: Data?, error: CourierError?) throws -> T {
        try value(of: bodyData(request: request, statusCode: head?.statusCode, data: data, error: error))
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
        try value(of: bodyData(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error))
    }

    /// The value decoded from `data`, or the empty value for an empty body of an ``EmptyResponse`` type.
    private func value(of data: Data) throws -> T {
        if data.isEmpty {
            guard let empty = T.self as? any EmptyResponse.Type, let value = empty.emptyValue() as? T else {
                throw CourierError.responseSerializationFailed(.inputDataNilOrZeroLength)
            }
            return value
        }
        do {
            return try makeDecoder().decode(T.self, from: data)
        } catch {
            throw CourierError.responseSerializationFailed(.decodingFailed(error: error))
        }
    }
}

/// A decoder that reads values from `Data`, such as `JSONDecoder` or `PropertyListDecoder`.
public protocol DataDecoder {
    /// Decodes a `T` from `data`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}

extension String.Encoding {
    /// The encoding an IANA charset name (from a `Content-Type`) stands for, or `nil` if unknown.
    static func courier(ianaCharsetName name: String) -> String.Encoding? {
        switch name.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            .lowercased()
        {
        case "utf-8", "utf8": return .utf8
        case "us-ascii", "ascii": return .ascii
        case "iso-8859-1", "latin1", "iso_8859-1", "l1": return .isoLatin1
        case "iso-8859-2", "latin2": return .isoLatin2
        case "windows-1252", "cp1252": return .windowsCP1252
        case "windows-1251", "cp1251": return .windowsCP1251
        case "windows-1250", "cp1250": return .windowsCP1250
        case "utf-16": return .utf16
        case "utf-16be": return .utf16BigEndian
        case "utf-16le": return .utf16LittleEndian
        case "utf-32": return .utf32
        case "utf-32be": return .utf32BigEndian
        case "utf-32le": return .utf32LittleEndian
        case "shift_jis", "shift-jis", "sjis": return .shiftJIS
        case "euc-jp": return .japaneseEUC
        case "iso-2022-jp": return .iso2022JP
        case "macintosh", "mac": return .macOSRoman
        default: return nil
        }
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
