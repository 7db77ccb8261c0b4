/// What ``HTTPCache/lookup(_:now:)`` tells the request core to do before sending a request.
enum HTTPCacheLookup: Sendable {
    /// Answer with `response` (``HTTPCachedResponse/head`` and its body) without the network.
    case hit(HTTPCachedResponse)
    /// Answer with the stale `response` now, and refresh it in the background: send the request
    /// with `conditionalHeaders` added, handle the answer as a revalidation's (merge a `304`,
    /// store a new response), then call ``HTTPCache/finishRefresh(forKey:)`` with the entry's key
    /// whatever happened. Handed out once per key until then; other lookups meanwhile get `hit`.
    case hitAndRefresh(HTTPCachedResponse, conditionalHeaders: HTTPHeaders)
    /// Send the request with `conditionalHeaders` added. On `304`, answer with
    /// ``HTTPCache/mergeNotModified(_:into:for:requestTime:responseTime:now:)``'s result; on
    /// another response, store it as a miss's; on a failure (or `500`, `502`, `503`, `504`), try
    /// ``HTTPCache/staleResponseOnError(for:now:)``.
    case revalidate(HTTPCachedResponse, conditionalHeaders: HTTPHeaders)
    /// Send the request as it is, then offer the response to ``HTTPCache/writer(for:response:requestTime:responseTime:)``.
    case miss
    /// Answer `504 Gateway Timeout` (``HTTPCache/gatewayTimeoutHead``, an empty body) without
    /// the network: the request accepts only a stored response and none can be used.
    case gatewayTimeout
}
