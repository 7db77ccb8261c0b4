import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Something a request URL can be made from: a `String`, a `URL` or `URLComponents`.
///
/// Conform your own types (an API endpoint enum, say) to pass them wherever Courier takes a URL.
public protocol URLConvertible: Sendable {
    /// The URL, or a ``CourierError`` of kind ``CourierError/Kind/invalidURL`` if there is none.
    func asURL() throws -> URL
}

extension String: URLConvertible {
    /// The URL this string spells, which must have a scheme and a host (`https://example.org/a`),
    /// or be a file URL (`file:///tmp/notes.txt`).
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` when the string is not such a URL.
    public func asURL() throws -> URL {
        guard let url = URL(string: self), let scheme = url.scheme, !scheme.isEmpty else {
            throw CourierError.invalidURL(self)
        }
        // A file URL has no host (`file:///tmp/notes.txt`); every other needs one.
        guard url.isFileURL || !(url.host ?? "").isEmpty else { throw CourierError.invalidURL(self) }
        return url
    }
}

extension URL: URLConvertible {
    /// The URL itself.
    public func asURL() throws -> URL { self }
}

extension URLComponents: URLConvertible {
    /// The URL the components form.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` when the components form none.
    public func asURL() throws -> URL {
        guard let url else { throw CourierError.invalidURL(description) }
        return url
    }
}

/// Something a `URLRequest` can be made from, such as a typed API route.
public protocol URLRequestConvertible: Sendable {
    /// The request, or a ``CourierError`` saying why there is none.
    func asURLRequest() throws -> URLRequest
}

extension URLRequestConvertible {
    /// The request, or `nil` where ``asURLRequest()`` throws.
    public var urlRequest: URLRequest? { try? asURLRequest() }
}

extension URLRequest: URLRequestConvertible {
    /// The request itself.
    public func asURLRequest() throws -> URLRequest { self }
}
