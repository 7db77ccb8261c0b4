import Foundation

/// Turns each piece of a streamed body into a value, for
/// ``DataStreamRequest/responseStream(using:on:bufferLimit:stream:)``.
///
/// A piece is what the transport delivered at once, so its boundaries depend on the network: a
/// serializer that needs whole records should get them from a format that marks them. For JSON
/// lines use ``DataStreamRequest/responseStreamDecodable(of:on:decoder:preprocessor:bufferLimit:maximumLineLength:stream:)``,
/// and for text cut at character boundaries ``DataStreamRequest/responseStreamString(on:bufferLimit:stream:)``.
public protocol DataStreamSerializer<SerializedObject>: Sendable {
    /// The value made of each piece.
    associatedtype SerializedObject: Sendable

    /// The value made of one piece. An error thrown here reaches the handler as a `.failure`
    /// event and the stream goes on.
    func serialize(_ data: Data) throws -> SerializedObject
}

extension DataStreamSerializer {
    /// One piece serialized, its failure as a ``CourierError`` (a serializer's own error wrapped
    /// as ``CourierError/Kind/responseSerializationFailed``): what stream handlers and loops get.
    func result(serializing data: Data) -> Result<SerializedObject, CourierError> {
        do {
            return .success(try serialize(data))
        } catch {
            return .failure(
                (error as? CourierError) ?? .responseSerializationFailed(.customSerializationFailed(error: error))
            )
        }
    }
}

/// Each piece decoded as a `T` by a `DataDecoder` (a `JSONDecoder` by default), after a
/// ``DataPreprocessor``.
public struct DecodableStreamSerializer<T: Decodable & Sendable>: DataStreamSerializer {
    /// The decoder used for every piece.
    public let decoder: any DataDecoder
    /// Prepares each piece before it is decoded.
    public let dataPreprocessor: any DataPreprocessor

    /// Creates a serializer.
    public init(
        decoder: any DataDecoder = JSONDecoder(),
        dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) {
        self.decoder = decoder
        self.dataPreprocessor = dataPreprocessor
    }

    /// The piece, preprocessed, decoded as a `T`.
    ///
    /// - Throws: ``CourierError/SerializationFailureReason/decodingFailed(error:)``, or what the
    ///   preprocessor throws.
    public func serialize(_ data: Data) throws -> T {
        let prepared = try dataPreprocessor.preprocess(data)
        do {
            return try decoder.decode(T.self, from: prepared)
        } catch {
            throw CourierError.responseSerializationFailed(.decodingFailed(error: error))
        }
    }
}

/// Each piece as it came.
public struct PassthroughStreamSerializer: DataStreamSerializer {
    /// Creates the serializer.
    public init() {}

    /// `data` itself.
    public func serialize(_ data: Data) throws -> Data { data }
}

/// Each piece read as UTF-8 text on its own; a character split between two pieces becomes
/// replacement characters, so prefer ``DataStreamRequest/responseStreamString(on:bufferLimit:stream:)``,
/// which cuts at character boundaries.
public struct StringStreamSerializer: DataStreamSerializer {
    /// Creates the serializer.
    public init() {}

    /// `data` read as UTF-8, invalid sequences replaced.
    public func serialize(_ data: Data) throws -> String { String(decoding: data, as: UTF8.self) }
}

extension DataStreamSerializer {
    /// A ``DecodableStreamSerializer``: `responseStream(using: .decodable(of: Tick.self))`.
    public static func decodable<T: Decodable & Sendable>(
        of type: T.Type,
        decoder: any DataDecoder = JSONDecoder(),
        dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) -> DecodableStreamSerializer<T> where Self == DecodableStreamSerializer<T> {
        DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: dataPreprocessor)
    }
}

extension DataStreamSerializer where Self == PassthroughStreamSerializer {
    /// A ``PassthroughStreamSerializer``: `responseStream(using: .passthrough)`.
    public static var passthrough: PassthroughStreamSerializer { PassthroughStreamSerializer() }
}

extension DataStreamSerializer where Self == StringStreamSerializer {
    /// A ``StringStreamSerializer``: `responseStream(using: .string)`.
    public static var string: StringStreamSerializer { StringStreamSerializer() }
}
