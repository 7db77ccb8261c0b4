import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body read by `JSONSerialization` into untyped values: Alamofire's deprecated
/// `JSONResponseSerializer`, kept so that code moving from Alamofire compiles and runs.
///
/// The value is Sendable, so it is made of Swift values: `[String: any Sendable]` for an object,
/// `[any Sendable]` for an array, `String`, `Bool`, `Int` (or `Double` for a number with a
/// fraction or out of `Int`'s range) and `NSNull` for `null`. Casts Alamofire code makes
/// (`value as? [String: Any]`) work on it. An empty body allowed by the status or method gives
/// `NSNull()`, as in Alamofire.
@available(*, deprecated, message: "Decode a Decodable type instead (DecodableResponseSerializer, responseDecodable).")
public struct JSONResponseSerializer: ResponseSerializer {
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPMethod>
    /// How `JSONSerialization` reads the body.
    public let options: JSONSerialization.ReadingOptions

    /// A serializer; every parameter has Alamofire's default.
    public init(
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments
    ) {
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
    }

    public func serialize(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        error: CourierError?
    ) throws -> any Sendable {
        try json(from: bodyData(request: request, statusCode: response?.statusCode, data: data, error: error))
    }

    public func serialize(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        error: CourierError?
    ) throws -> any Sendable {
        try json(from: bodyData(method: requestHead?.method, statusCode: head?.statusCode, data: data, error: error))
    }

    private func json(from data: Data) throws -> any Sendable {
        guard !data.isEmpty else { return NSNull() }
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
            // A Bool inside reports the Objective-C type `c` (char).
            if String(cString: number.objCType) == "c" { return number.boolValue }
            let double = number.doubleValue
            if double.rounded() == double, let integer = Int(exactly: double) ?? Int(number.stringValue) {
                return integer
            }
            return double
        default:
            return NSNull()
        }
    }
}
