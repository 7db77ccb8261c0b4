import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes a ``Parameters`` dictionary as `application/x-www-form-urlencoded`, into the URL's
/// query or as the body: Alamofire's `URLEncoding`.
///
/// ```swift
/// session.request(url, parameters: ["q": "swift", "page": 2])                      // GET …?page=2&q=swift
/// session.request(url, method: .post, parameters: ["ids": [1, 2]], encoding: URLEncoding.httpBody)
/// // body: ids%5B%5D=1&ids%5B%5D=2
/// ```
///
/// Keys are sorted, nested ones too, so the same parameters always give the same text (Alamofire
/// leaves nested dictionaries in their own order). An array's elements repeat its key with `[]`
/// (``ArrayEncoding``); a dictionary's members become `key[member]`; `Bool`s are `1` and `0`
/// (``BoolEncoding``); a whole `Double` is written without its `.0`, as Alamofire writes it on
/// Apple platforms; a `nil` value is left out (Alamofire would write `nil`). Everything but
/// RFC 3986's unreserved characters, `?` and `/` is percent-escaped.
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded parameters go: in the query for `GET`, `HEAD` and `DELETE` and in the
    /// body otherwise (`methodDependent`), always in the query, or always in the body.
    public typealias Destination = URLEncodedFormParameterEncoder.Destination

    /// How an array's elements name themselves.
    public enum ArrayEncoding: Sendable {
        /// `key[]` for every element (the default).
        case brackets
        /// `key` for every element.
        case noBrackets
        /// `key[0]`, `key[1]`…, as jQuery and Node.js write them.
        case indexInBrackets
        /// The name `encode` makes from the key and the element's index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        func encode(key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: key + "[]"
            case .noBrackets: key
            case .indexInBrackets: "\(key)[\(index)]"
            case .custom(let encode): encode(key, index)
            }
        }
    }

    /// How a `Bool` is written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0` (the default).
        case numeric
        /// `true` and `false`.
        case literal

        func encode(value: Bool) -> String {
            switch self {
            case .numeric: value ? "1" : "0"
            case .literal: value ? "true" : "false"
            }
        }
    }

    /// In the query for `GET`, `HEAD` and `DELETE`, in the body otherwise.
    public static var `default`: URLEncoding { URLEncoding() }
    /// Always in the query.
    public static var queryString: URLEncoding { URLEncoding(destination: .queryString) }
    /// Always in the body.
    public static var httpBody: URLEncoding { URLEncoding(destination: .httpBody) }

    /// Where the parameters go.
    public let destination: Destination
    /// How arrays are written.
    public let arrayEncoding: ArrayEncoding
    /// How `Bool`s are written.
    public let boolEncoding: BoolEncoding

    /// An encoding; every parameter has Alamofire's default.
    public init(
        destination: Destination = .methodDependent,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// The request with `parameters` in its query (after any query it has) or as its body, with
    /// `Content-Type: application/x-www-form-urlencoded; charset=utf-8` unless it has one.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        let request = try urlRequest.asURLRequest()
        guard let parameters else { return request }
        var components: [(String, String)] = []
        for key in parameters.keys.sorted() {
            if let value = parameters[key] { components += queryComponents(fromKey: key, value: value) }
        }
        let query = components.map { "\($0)=\($1)" }.joined(separator: "&")
        return try URLEncodedFormParameterEncoder.place(query, in: request, destination: destination)
    }

    /// The escaped name–value pairs `value` makes under `key`: one for a plain value, one per
    /// element of an array or member of a dictionary (recursively).
    public func queryComponents(fromKey key: String, value: Any) -> [(String, String)] {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            // `nil` is left out; an optional holding a value is that value.
            return mirror.children.first.map { queryComponents(fromKey: key, value: $0.value) } ?? []
        }
        if let dictionary = value as? [String: Any] {
            return dictionary.keys.sorted().flatMap { member in
                dictionary[member].map { queryComponents(fromKey: "\(key)[\(member)]", value: $0) } ?? []
            }
        }
        if let array = value as? [Any] {
            return array.enumerated().flatMap { index, element in
                queryComponents(fromKey: arrayEncoding.encode(key: key, atIndex: index), value: element)
            }
        }
        return [(escape(key), escape(text(of: value)))]
    }

    /// `string` percent-escaped for a query: everything but RFC 3986's unreserved characters, `?`
    /// and `/`.
    public func escape(_ string: String) -> String {
        string.addingPercentEncoding(withAllowedCharacters: URLEncodedFormEncoder.defaultAllowedCharacters) ?? string
    }

    /// A plain value as text: `Bool`s as ``boolEncoding`` says (a Foundation `NSNumber` made from
    /// one too, as `JSONSerialization` gives them), whole floating-point numbers without `.0`.
    private func text(of value: Any) -> String {
        if let number = value as? NSNumber, type(of: value) is NSNumber.Type {
            // A Foundation number: its Objective-C type says what it holds, `c` (char) a Bool,
            // `d` or `f` a floating-point number; an integer's own text is exact.
            switch String(cString: number.objCType) {
            case "c": return boolEncoding.encode(value: number.boolValue)
            case "d", "f": return Self.text(ofDouble: number.doubleValue, exact: number.stringValue)
            default: return number.stringValue
            }
        }
        switch value {
        case let bool as Bool: return boolEncoding.encode(value: bool)
        case let double as Double: return Self.text(ofDouble: double, exact: "\(double)")
        case let float as Float: return Self.text(ofDouble: Double(float), exact: "\(float)")
        default: return "\(value)"
        }
    }

    /// A whole number within ±2^53 (where a `Double` holds every integer) as an integer, else `exact`.
    private static func text(ofDouble value: Double, exact: String) -> String {
        guard value.rounded() == value, abs(value) <= 9_007_199_254_740_992 else { return exact }
        return String(Int64(value))
    }

}
