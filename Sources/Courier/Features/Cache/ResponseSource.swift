/// Where a response came from: the network, Courier's ``HTTPCache``, or the cache after the
/// server confirmed the stored response (`304 Not Modified`). Read it in
/// ``RequestMetrics/responseSource``.
public enum ResponseSource: String, Sendable, Hashable, CaseIterable {
    /// The server sent it.
    case network
    /// The cache answered: without the network, or in place of the network's failure or
    /// `5xx` (`stale-if-error`).
    case cache
    /// The cache answered after the server confirmed the stored response was still good.
    case revalidatedCache
}
