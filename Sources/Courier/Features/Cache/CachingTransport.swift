import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Puts Courier's ``HTTPCache`` in front of a session's transport, for every exchange a request
/// makes (a redirect's too), the same way over URLSession and AsyncHTTPClient: a fresh stored
/// response is played without the network; a stale one is revalidated, and a `304` answers with
/// the stored body; a response the rules allow is stored as its body streams through; an error
/// (or a `500`, `502`, `503` or `504`) within a response's `stale-if-error` window answers with
/// the stored one.
///
/// The session makes it when ``Session/Configuration/httpCache`` is set; requests see no
/// difference but ``RequestMetrics/responseSource``.
final class CachingTransport: Transport {
    let base: any Transport
    let cache: HTTPCache
    /// The mode of a request that chose none: `default`, or what the `URLSessionConfiguration`
    /// whose `URLCache` the cache replaced asks for with its `requestCachePolicy`.
    let defaultMode: RequestCacheMode

    init(base: any Transport, cache: HTTPCache, defaultMode: RequestCacheMode? = nil) {
        self.base = base
        self.cache = cache
        self.defaultMode = defaultMode ?? .default
    }

    /// The mode `head` asks for, else `defaultMode` for a method the cache serves (a
    /// configuration's `returnCacheDataDontLoad` must not answer every `POST` with a `504`).
    static func mode(of head: RequestHead, defaultMode: RequestCacheMode) -> RequestCacheMode {
        let own = head.effectiveCacheMode
        guard own == .default, HTTPCachePolicy.isCacheableMethod(head.method.rawValue) else { return own }
        return defaultMode
    }

    func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    )
        -> any TransportTask
    {
        guard let head = RequestHead(request) else {
            return base.makeTask(for: request, body: body, eventHandler: eventHandler)
        }
        return makeTask(for: head, body: body, eventHandler: eventHandler)
    }

    func makeTask(
        for head: RequestHead,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    )
        -> any TransportTask
    {
        let request = HTTPCacheRequest(
            method: head.method.rawValue,
            url: head.url,
            headers: head.headers,
            mode: Self.mode(of: head, defaultMode: defaultMode)
        )
        let now = Date()
        let decision = head.cacheDecision
        let exchange: CacheExchangeTask
        switch cache.lookup(request, now: now) {
        case .hit(let cached):
            exchange = CacheExchangeTask(cache: cache, request: request, handler: eventHandler, plan: .play(cached))
        case .hitAndRefresh(let cached, let conditionalHeaders):
            exchange = CacheExchangeTask(cache: cache, request: request, handler: eventHandler, plan: .play(cached))
            refresh(head, body: body, adding: conditionalHeaders, stored: cached, request: request)
        case .revalidate(let cached, let conditionalHeaders):
            var conditional = head
            conditional.addHeaders(conditionalHeaders, replacing: true)
            // A 304 to the cache's own conditions that matches nothing stored is no answer for
            // a caller who asked without them: the request then goes again as it was made.
            let callerIsConditional = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"]
                .contains { head.headers.value(for: $0) != nil }
            let base = self.base
            var resend: (@Sendable (CacheExchangeTask) -> any TransportTask)?
            if !callerIsConditional {
                resend = { exchange in base.makeTask(for: head, body: body, eventHandler: exchange) }
            }
            exchange = CacheExchangeTask(
                cache: cache,
                request: request,
                handler: eventHandler,
                plan: .network(revalidating: cached),
                resend: resend,
                decision: decision
            )
            exchange.send(over: base.makeTask(for: conditional, body: body, eventHandler: exchange))
        case .miss:
            exchange = CacheExchangeTask(
                cache: cache,
                request: request,
                handler: eventHandler,
                plan: .network(revalidating: nil),
                decision: decision
            )
            exchange.send(over: base.makeTask(for: head, body: body, eventHandler: exchange))
        case .gatewayTimeout:
            exchange = CacheExchangeTask(cache: cache, request: request, handler: eventHandler, plan: .gatewayTimeout)
        }
        return exchange
    }

    /// Refreshes `stored` in the background (`stale-while-revalidate`): the answer is stored or
    /// merged, and nobody waits for it.
    private func refresh(
        _ head: RequestHead,
        body: RequestBody?,
        adding conditionalHeaders: HTTPHeaders,
        stored: HTTPCachedResponse,
        request: HTTPCacheRequest
    ) {
        var conditional = head
        conditional.addHeaders(conditionalHeaders, replacing: true)
        let refresh = CacheExchangeTask(
            cache: cache,
            request: request,
            handler: nil,
            plan: .network(revalidating: stored),
            refreshesKey: stored.entry.key
        )
        refresh.send(over: base.makeTask(for: conditional, body: body, eventHandler: refresh))
        refresh.resume()
    }

    func invalidate() async {
        await base.invalidate()
    }
}
