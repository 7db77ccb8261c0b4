/// Lets `Courier` use a transport from a module it cannot import: `CourierNIO`'s
/// `AsyncHTTPClientTransport` conforms, and ``Session`` finds it by name when that module is
/// linked into the program. Not for your own types: pass a transport to `Session` instead.
public protocol _DefaultTransportProviding: Transport {
    /// The transport a session uses when given none.
    static var _defaultTransport: any Transport { get }
}

/// The transport a ``Session`` uses when given none: AsyncHTTPClient where `CourierNIO` is
/// linked, URLSession otherwise.
enum DefaultTransport {
    /// `CourierNIO.AsyncHTTPClientTransport`, by its mangled name, if the module is linked.
    ///
    /// `Courier` stays Foundation-only, so it cannot name the type; the Swift runtime can still
    /// find it (this is how Foundation's `NSClassFromString` finds Swift classes).
    static let linkedProvider: (any _DefaultTransportProviding.Type)? =
        _typeByName("10CourierNIO24AsyncHTTPClientTransportC") as? any _DefaultTransportProviding.Type

    /// A transport for a new session.
    static func make() -> any Transport {
        linkedProvider?._defaultTransport ?? URLSessionTransport()
    }
}
