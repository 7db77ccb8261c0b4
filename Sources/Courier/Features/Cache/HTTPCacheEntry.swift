import Foundation

/// What the cache keeps of one stored response besides its body: enough to serve it, to tell
/// its age and freshness, to revalidate it and to match it to a later request.
struct HTTPCacheEntry: Equatable, Sendable {
    /// The primary key (``HTTPCacheKey/primary(method:url:)``).
    var key: String
    /// The request's URL.
    var url: URL
    /// The request's method (`GET` or `HEAD`).
    var method: String
    /// The response's status code.
    var statusCode: Int
    /// The response's headers, hop-by-hop fields removed.
    var responseHeaders: HTTPHeaders
    /// The request's values of the headers the response's `Vary` names (lowercased names,
    /// normalised values; absent headers left out).
    var selectedRequestHeaders: [String: String]
    /// When the request that brought the response (or its last revalidation) was sent.
    var requestTime: Date
    /// When that response arrived.
    var responseTime: Date
    /// The body's length in bytes, set by the store.
    var bodyLength: Int64

    /// Whether a request with `headers` may be served this entry (its `Vary`-named headers match).
    func matches(requestHeaders headers: HTTPHeaders) -> Bool {
        HTTPCacheKey.varyMatches(
            responseHeaders: responseHeaders,
            selected: selectedRequestHeaders,
            requestHeaders: headers
        )
    }

    /// Whether `other` is this very stored response (the same times and body length), not one
    /// stored under the same key since.
    func isSameVersion(as other: HTTPCacheEntry) -> Bool {
        requestTime == other.requestTime && responseTime == other.responseTime && bodyLength == other.bodyLength
    }

    /// The response's `ETag`, if any.
    var entityTag: String? { responseHeaders.value(for: "ETag") }
}
