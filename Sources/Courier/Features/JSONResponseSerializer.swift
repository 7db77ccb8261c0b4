import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body read by `JSONSerialization` into untyped values: Alamofire's deprecated
/// `JSONResponseSerializer`, kept so that code moving from Alamofire compiles and runs.
///
/// The value is Sendable, so it is made of Swift values: `[String: any Sendable]` for an object,
/// `[any Sendable]` for an array, `String`, `Bool`, `Int` for an integer (exactly, however large,
/// within `Int`'s range; a `Double` beyond it), `Double` for a number written with a fraction or
/// an exponent (`2.0` too), and `NSNull` for `null`. Alamofire code's casts of containers and
/// strings (`value as? [String: Any]`) work on it; a number casts only to its own type (`Int` or
/// `Double`), where Alamofire's `NSNumber` on Apple platforms cast to either. An empty body
/// allowed by the status or method gives `NSNull()`, as in Alamofire.
@available(*, deprecated, message: "Decode a Decodable type instead (DecodableResponseSerializer, responseDecodable).")
public struct JSONResponseSerializer: ResponseSerializer {
    /// Prepares a non-empty body before `JSONSerialization` reads it.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes whose empty body is a valid answer (`NSNull()`).
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is a valid answer (`NSNull()`).
    public let emptyRequestMethods: Set<HTTPMethod>
    /// How `JSONSerialization` reads the body.
    public let options: JSONSerialization.ReadingOptions

    /// A serializer; every parameter has Alamofire's default.
    public init(
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
    }

    /// The body as untyped JSON values.
    public func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws -> any Sendable {
        try json(from: preparedBody(request: request, statusCode: response?.statusCode, data: data, error: error))
    }

    /// The body as untyped JSON values, reading only the request head's method.
    public func serialize(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws -> any Sendable {
        try json(
            from: preparedBody(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error)
        )
    }

    /// The JSON values in `data`, or `NSNull()` for an allowed empty body (`nil`).
    private func json(from data: Data?) throws -> any Sendable {
        guard let data else { return NSNull() }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: options)
        } catch {
            throw CourierError.responseSerializationFailed(.jsonSerializationFailed(error: error))
        }
        return Self.sendable(object)
    }

    /// `object`, as `JSONSerialization` made it, in Sendable Swift values.
    static func sendable(_ object: Any) -> any Sendable {
        switch object {
        case let dictionary as [String: Any]:
            return dictionary.mapValues { sendable($0) }
        case let array as [Any]:
            return array.map { sendable($0) }
        case let string as String:
            return string
        case let number as NSNumber:
            // The Objective-C type says what the JSON held: `c` (char) a Bool, `d` or `f` a
            // number with a fraction or exponent, anything else an integer, kept exact (through
            // its text, not a Double, which would change an id above 2^53).
            switch String(cString: number.objCType) {
            case "c": return number.boolValue
            case "d", "f": return number.doubleValue
            default: return Int(number.stringValue) ?? number.doubleValue
            }
        default:
            return NSNull()
        }
    }
}
