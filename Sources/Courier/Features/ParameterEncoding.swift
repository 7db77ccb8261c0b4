import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Parameters as a dictionary of any values, for ``ParameterEncoding``: Alamofire's
/// `Parameters`, so that code written as `let parameters: Parameters = ["q": "swift"]` moves over
/// unchanged.
///
/// Values are strings, numbers, `Bool`s, arrays and dictionaries of them. ``URLEncoding`` writes
/// anything else as its description; ``JSONEncoding`` refuses what JSON cannot hold. For a typed
/// value, prefer an `Encodable` one with a ``ParameterEncoder``. A variable typed
/// `[String: Any]` must be retyped `Parameters` (an `Any` is not `Sendable`).
public typealias Parameters = [String: any Sendable]

/// Puts a ``Parameters`` dictionary into a request: Alamofire's `ParameterEncoding`, kept for
/// code that builds parameters as dictionaries. ``URLEncoding`` and ``JSONEncoding`` are the two
/// Courier ships.
///
/// ```swift
/// session.request(url, method: .post, parameters: ["name": "Ada", "tags": ["a", "b"]], encoding: JSONEncoding.default)
/// ```
///
/// New code can use an `Encodable` value with a ``ParameterEncoder`` instead, which the compiler
/// checks.
public protocol ParameterEncoding: Sendable {
    /// The request `urlRequest` makes, with `parameters` encoded into it (unchanged when
    /// `parameters` is `nil`).
    ///
    /// - Throws: What `urlRequest` throws, or a ``CourierError`` of kind
    ///   ``CourierError/Kind/parameterEncodingFailed`` when the parameters cannot be encoded.
    func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest
}
