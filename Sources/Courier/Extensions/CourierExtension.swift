import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's members on types it does not own, reached through `.courier`, as Alamofire's are
/// through `.af`: `URLSessionConfiguration.courier.default`. The namespace keeps them from
/// clashing with the type's own members, or with another library's.
public struct CourierExtension<ExtendedType> {
    /// The value (or, for static members, the type) extended.
    public private(set) var type: ExtendedType

    /// A namespace over `type`.
    public init(_ type: ExtendedType) {
        self.type = type
    }
}

extension CourierExtension: Sendable where ExtendedType: Sendable {}

/// A type with Courier's members under `.courier`. Adopt it to give a type of yours the
/// namespace, then extend `CourierExtension where ExtendedType == YourType`.
public protocol CourierExtended {
    /// The type the namespace extends: usually `Self`.
    associatedtype ExtendedType

    /// Courier's static members of this type.
    static var courier: CourierExtension<ExtendedType>.Type { get set }
    /// Courier's members of this value.
    var courier: CourierExtension<ExtendedType> { get set }
}

extension CourierExtended {
    /// Courier's static members of this type.
    public static var courier: CourierExtension<Self>.Type {
        get { CourierExtension<Self>.self }
        // The protocol asks for a setter (as Alamofire's does); the namespace holds nothing to set.
        set {}
    }

    /// Courier's members of this value.
    public var courier: CourierExtension<Self> {
        get { CourierExtension(self) }
        // The protocol asks for a setter (as Alamofire's does); the namespace holds nothing to set.
        set {}
    }
}

extension URLSessionConfiguration: CourierExtended {}
extension URLRequest: CourierExtended {}
extension HTTPURLResponse: CourierExtended {}
extension Notification: CourierExtended {}

extension CourierExtension where ExtendedType: URLSessionConfiguration {
    /// `URLSessionConfiguration.default` as Courier's URLSession transport wants it, with
    /// Courier's default headers (`Accept-Encoding`, `Accept-Language`, `User-Agent`) among its
    /// additional headers: Alamofire's `URLSessionConfiguration.af.default`.
    ///
    /// Courier's sessions add those headers themselves; these are for code that makes its own
    /// `URLSession` with the configuration too.
    public static var `default`: URLSessionConfiguration {
        withDefaultHeaders(URLSessionTransport.defaultConfiguration())
    }

    /// `URLSessionConfiguration.ephemeral` (nothing kept on disk) with Courier's default headers:
    /// Alamofire's `URLSessionConfiguration.af.ephemeral`.
    public static var ephemeral: URLSessionConfiguration {
        withDefaultHeaders(.ephemeral)
    }

    private static func withDefaultHeaders(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        var headers = configuration.httpAdditionalHeaders ?? [:]
        for header in HTTPHeaders.default { headers[header.name] = header.value }
        configuration.httpAdditionalHeaders = headers
        return configuration
    }
}
