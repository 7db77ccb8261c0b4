import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body as text, in the charset the response names, else UTF-8, else ISO-8859-1.
public struct StringResponseSerializer: ResponseSerializer {
    /// Prepares a non-empty body before it is read.
    public let dataPreprocessor: any DataPreprocessor
    /// The encoding to use whatever the response says, or `nil` to follow the response.
    public let encoding: String.Encoding?
    /// Status codes whose empty body is a valid answer.
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is a valid answer.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Prepares a non-empty body before it is read.
    ///   - encoding: Forces an encoding; by default the response's `charset`, or UTF-8 when it
    ///     names none (ISO-8859-1 if the body is not valid UTF-8, as HTTP/1.1 once defaulted).
    ///   - emptyResponseCodes: Status codes whose empty body is a valid answer.
    ///   - emptyRequestMethods: Methods whose empty body is a valid answer.
    public init(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Serializes the response; see the type for the rules it follows.
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

    /// Serializes the response; see the type for the rules it follows.
    public func serialize(
        request: URLRequest?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws
        -> String
    {
        try text(of: preparedBody(request: request, statusCode: head?.statusCode, data: data, error: error), head: head)
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
            of: preparedBody(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error),
            head: head
        )
    }

    /// The body as text, in the encoding given, else the one `head` names, else UTF-8 or
    /// ISO-8859-1; `""` for an allowed empty body.
    private func text(of data: Data?, head: ResponseHead?) throws -> String {
        guard let data else { return "" }
        let named = encoding ?? head?.textEncodingName.flatMap(String.Encoding.init(ianaCharsetName:))
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

extension DataResponseSerializerProtocol where Self == StringResponseSerializer {
    /// A ``StringResponseSerializer`` with the default policy: `responseSerializer: .string`.
    public static var string: StringResponseSerializer { StringResponseSerializer() }

    /// A ``StringResponseSerializer``: `responseSerializer: .string(encoding: .utf8)`.
    public static func string(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> StringResponseSerializer {
        StringResponseSerializer(
            dataPreprocessor: dataPreprocessor,
            encoding: encoding,
            emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods
        )
    }
}

extension DownloadResponseSerializerProtocol where Self == StringResponseSerializer {
    /// A ``StringResponseSerializer`` with the default policy: `responseSerializer: .string`.
    public static var string: StringResponseSerializer { StringResponseSerializer() }

    /// A ``StringResponseSerializer``: `responseSerializer: .string(encoding: .utf8)`.
    public static func string(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> StringResponseSerializer {
        StringResponseSerializer(
            dataPreprocessor: dataPreprocessor,
            encoding: encoding,
            emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods
        )
    }
}
