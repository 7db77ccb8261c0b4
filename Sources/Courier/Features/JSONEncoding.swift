import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes a ``Parameters`` dictionary (or any JSON object) as the request's JSON body with
/// `JSONSerialization`, setting `Content-Type: application/json` unless the request has one:
/// Alamofire's `JSONEncoding`.
///
/// ```swift
/// session.request(url, method: .post, parameters: ["name": "Ada", "admin": true], encoding: JSONEncoding.default)
/// ```
///
/// A value JSON cannot hold (a date, a `Double.nan`, a custom type) fails the request with
/// ``CourierError/Kind/parameterEncodingFailed`` before anything is sent; it never reaches
/// `JSONSerialization`, which raises an uncatchable exception for one on Apple platforms.
public struct JSONEncoding: ParameterEncoding {
    /// What can go wrong encoding JSON.
    public enum Error: Swift.Error, Sendable, CustomStringConvertible {
        /// The value holds something JSON cannot represent.
        case invalidJSONObject

        public var description: String {
            "the parameters hold a value JSON cannot represent (only strings, numbers, Bools, arrays, "
                + "dictionaries with String keys and NSNull, and no NaN or infinity)"
        }
    }

    /// Compact JSON.
    public static var `default`: JSONEncoding { JSONEncoding() }
    /// Indented JSON.
    public static var prettyPrinted: JSONEncoding { JSONEncoding(options: .prettyPrinted) }

    /// How `JSONSerialization` writes the JSON.
    public let options: JSONSerialization.WritingOptions

    /// An encoding that writes with `options`.
    public init(options: JSONSerialization.WritingOptions = []) {
        self.options = options
    }

    /// The request with `parameters` as its JSON body (unchanged when `parameters` is `nil`).
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        try encode(urlRequest, withJSONObject: parameters)
    }

    /// The request with `jsonObject` (a dictionary, an array…) as its JSON body; unchanged when
    /// it is `nil`.
    public func encode(
        _ urlRequest: any URLRequestConvertible,
        withJSONObject jsonObject: Any? = nil
    ) throws
        -> URLRequest
    {
        var request = try urlRequest.asURLRequest()
        guard let jsonObject else { return request }
        guard JSONSerialization.isValidJSONObject(jsonObject) else {
            throw CourierError.parameterEncodingFailed(Error.invalidJSONObject)
        }
        do {
            request.httpBody = try JSONSerialization.data(withJSONObject: jsonObject, options: options)
        } catch {
            throw CourierError.parameterEncodingFailed(error)
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}
