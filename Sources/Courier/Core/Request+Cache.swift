import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// How a request uses the session's HTTP cache.
extension Request {
    /// How this request uses the session's ``Session/Configuration/httpCache`` (after fetch's
    /// `cache` option): ``RequestCacheMode/default`` by the rules, or skip it, reload, revalidate,
    /// take any stored response, or only a stored one. Set it before the request starts. Without a
    /// cache in the session it changes nothing.
    @discardableResult
    public func cache(_ mode: RequestCacheMode) -> Self {
        mutableState.withLock { $0.cacheMode = mode }
        return self
    }

    /// This request's own ``CachedResponseHandler``, if it has one (set with
    /// ``cacheResponse(using:)``); otherwise the session's decides.
    public var cachedResponseHandler: (any CachedResponseHandler)? {
        mutableState.withLock { $0.cachedResponseHandler }
    }

    /// Decides with `handler`, in place of the session's, whether (and how) this request's
    /// responses are stored in the session's cache: `.doNotCache` stores none of them. Set it
    /// before the request starts.
    @discardableResult
    public func cacheResponse(using handler: any CachedResponseHandler) -> Self {
        mutableState.withLock { $0.cachedResponseHandler = handler }
        return self
    }

    /// What the cache asks before storing a response for this request: `nil` when everything
    /// the rules allow is stored (no handler, or `ResponseCacher.cache`).
    func cacheDecision(_ handler: (any CachedResponseHandler)?) -> (@Sendable (ResponseHead) async -> ResponseHead?)? {
        guard let handler else { return nil }
        if let cacher = handler as? ResponseCacher, case .cache = cacher.behavior { return nil }
        // Weak: the head is kept by the request, and must not keep it.
        return { [weak self] response in
            guard let self else { return nil }
            return await handler.request(self, willCache: response)
        }
    }
}
