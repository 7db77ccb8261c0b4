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
/// `nil` is written `null`. A value JSON cannot hold (a date, a `Double.nan`, a custom type)
/// fails the request with
/// ``CourierError/Kind/parameterEncodingFailed`` before anything is sent; it never reaches
/// `JSONSerialization`, which raises an uncatchable exception for one on Apple platforms.
public struct JSONEncoding: ParameterEncoding {
    /// What can go wrong encoding JSON.
    public enum Error: Swift.Error, Sendable, CustomStringConvertible {
        /// The value holds something JSON cannot represent.
        case invalidJSONObject

        /// What JSON cannot hold, in words.
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
        guard let given = jsonObject else { return request }
        let jsonObject = Self.nullingOptionals(given)
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

    /// `value` with every `Optional` inside unwrapped, and `nil` as `NSNull` (JSON's `null`): so
    /// that `nil` is written `null` on every platform (Apple's Foundation bridges it so itself;
    /// Linux's refuses the object).
    static func nullingOptionals(_ value: Any) -> Any {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.map { nullingOptionals($0.value) } ?? NSNull()
        }
        if let dictionary = value as? [String: Any] { return dictionary.mapValues(nullingOptionals) }
        if let array = value as? [Any] { return array.map(nullingOptionals) }
        return value
    }
}
