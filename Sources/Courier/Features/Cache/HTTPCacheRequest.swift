import Foundation

/// What the cache needs of a request: its method, URL, headers (as they will be sent) and the
/// request's ``RequestCacheMode``.
struct HTTPCacheRequest: Sendable {
    /// The method, such as `GET`; compared case-sensitively, as HTTP methods are.
    var method: String
    /// The URL, including the query; the fragment is ignored.
    var url: URL
    /// The headers that will be sent (those `Vary` may name, `Cache-Control`, `Pragma`,
    /// `Authorization`, `Range`).
    var headers: HTTPHeaders
    /// How the request uses the cache.
    var mode: RequestCacheMode

    init(method: String, url: URL, headers: HTTPHeaders = HTTPHeaders(), mode: RequestCacheMode = .default) {
        self.method = method
        self.url = url
        self.headers = headers
        self.mode = mode
    }
}
