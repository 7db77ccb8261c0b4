/// Lets `Courier` use a transport from a module it cannot import: `CourierNIO`'s
/// `AsyncHTTPClientTransport` conforms, and ``Session`` finds it by name when that module is
/// linked into the program. Not for your own types (pass a transport to `Session` instead),
/// hence behind the `CourierTransport` SPI.
///
/// Why a name lookup: Swift has no way for a linked module to register itself without being
/// called, and `Courier` must not depend on SwiftNIO. The name is checked by a test, so a rename
/// of the type fails CI rather than silently falling back to URLSession.
@_spi(CourierTransport)
public protocol DefaultTransportProviding: Transport {
    /// The transport a session uses when given none.
    static var defaultTransport: any Transport { get }
}

/// The transport a ``Session`` uses when given none: AsyncHTTPClient where `CourierNIO` is
/// linked, URLSession otherwise.
enum DefaultTransport {
    /// `CourierNIO.AsyncHTTPClientTransport`, by its mangled name, if the module is linked.
    ///
    /// `Courier` stays Foundation-only, so it cannot name the type; the Swift runtime can still
    /// find it (this is how Foundation's `NSClassFromString` finds Swift classes).
    static let linkedProvider: (any DefaultTransportProviding.Type)? =
        _typeByName("10CourierNIO24AsyncHTTPClientTransportC") as? any DefaultTransportProviding.Type

    /// A transport for a new session.
    static func make() -> any Transport {
        linkedProvider?.defaultTransport ?? URLSessionTransport()
    }
}
