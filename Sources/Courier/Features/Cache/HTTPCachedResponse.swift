import Foundation

/// A stored response as the cache hands it out: its entry, its body, and its current age.
struct HTTPCachedResponse: Sendable {
    /// The stored entry (status, headers, times).
    var entry: HTTPCacheEntry
    /// The body, read in chunks.
    var body: HTTPCacheBody
    /// The response's current age in seconds when it was looked up (RFC 9111 §4.2.3).
    var age: Int

    /// The head to answer with: the stored status and headers, `Age` set to ``age`` (RFC 9111
    /// §5.1 has a cache send its own age estimate).
    var head: HTTPCacheResponseHead {
        var headers = entry.responseHeaders
        headers.update(name: "Age", value: String(age))
        return HTTPCacheResponseHead(statusCode: entry.statusCode, headers: headers)
    }
}
