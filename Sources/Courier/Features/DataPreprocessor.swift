import Foundation

/// Prepares a response body before a serializer reads it: strips a prefix, unwraps an
/// envelope, decrypts.
///
/// Every Courier serializer takes one (`dataPreprocessor:`), and so does every `response…` and
/// `serializing…` call. It runs only on a non-empty body, after the empty-body policy
/// (``ResponseSerializer/emptyResponseCodes``) was applied, as in Alamofire. An error it throws
/// fails the response with that error (wrapped in
/// ``CourierError/SerializationFailureReason/customSerializationFailed(error:)`` unless it is a
/// ``CourierError``).
public protocol DataPreprocessor: Sendable {
    /// The body the serializer should read instead of `data`.
    func preprocess(_ data: Data) throws -> Data
}

/// Hands the body on unchanged: every serializer's default.
public struct PassthroughPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    /// `data` itself.
    public func preprocess(_ data: Data) throws -> Data { data }
}

/// Removes the `)]}',` line that Google's JSON APIs put before a body to stop it being run as a
/// script (cross-site script inclusion, XSSI). A body without it is handed on unchanged.
public struct GoogleXSSIPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    private static let prefix = Data(")]}',\n".utf8)

    /// `data` without its leading `)]}',` line, if it has one.
    public func preprocess(_ data: Data) throws -> Data {
        data.starts(with: Self.prefix) ? Data(data.dropFirst(Self.prefix.count)) : data
    }
}

extension DataPreprocessor where Self == PassthroughPreprocessor {
    /// A ``PassthroughPreprocessor``: `dataPreprocessor: .passthrough`.
    public static var passthrough: PassthroughPreprocessor { PassthroughPreprocessor() }
}

extension DataPreprocessor where Self == GoogleXSSIPreprocessor {
    /// A ``GoogleXSSIPreprocessor``: `dataPreprocessor: .googleXSSI`.
    public static var googleXSSI: GoogleXSSIPreprocessor { GoogleXSSIPreprocessor() }
}
