/// What to do with a request, given what the cache holds for it: ``HTTPCachePolicy``'s answer to
/// a lookup.
enum HTTPCacheDecision: Equatable, Sendable {
    /// Serve the stored response without the network; `age` (seconds) goes in its `Age` header.
    case serve(age: Int)
    /// Serve the stored response now (`stale-while-revalidate`), and refresh it in the
    /// background once, sending the request with `conditionalHeaders` added.
    case serveStaleAndRefresh(age: Int, conditionalHeaders: HTTPHeaders)
    /// Send the request with `conditionalHeaders` added; a `304` is merged into the stored entry
    /// and answered with its body, any other response replaces it.
    case revalidate(conditionalHeaders: HTTPHeaders)
    /// Send the request as it is; the stored response (if any) is not used.
    case network
    /// Answer `504 Gateway Timeout` without the network: the request accepts only a stored
    /// response (`only-if-cached`) and none can be used.
    case gatewayTimeout
}
