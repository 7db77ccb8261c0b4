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
final class CachingTransport: WrappingTransport {
    let base: any Transport
    let cache: HTTPCache
    /// The mode of a request that chose none: `default`, or what the `URLSessionConfiguration`
    /// whose `URLCache` the cache replaced asks for with its `requestCachePolicy`.
    let defaultMode: RequestCacheMode
    /// The session's cookie storage, for what a background refresh's response sets: no request
    /// receives that response to store them.
    let cookies: (any CookieStorage)?

    init(
        base: any Transport,
        cache: HTTPCache,
        defaultMode: RequestCacheMode? = nil,
        cookies: (any CookieStorage)? = nil
    ) {
        self.base = base
        self.cache = cache
        self.defaultMode = defaultMode ?? .default
        self.cookies = cookies
    }

    /// The mode `head` asks for, else `defaultMode` for a method the cache serves (a
    /// configuration's `returnCacheDataDontLoad` must not answer every `POST` with a `504`).
    static func mode(of head: RequestHead, defaultMode: RequestCacheMode) -> RequestCacheMode {
        let own = head.effectiveCacheMode
        guard own == .default, HTTPCachePolicy.isCacheableMethod(head.method.rawValue) else { return own }
        return defaultMode
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
        let exchange = CacheExchangeTask(
            cache: cache,
            request: request,
            handler: eventHandler,
            decision: head.cacheDecision,
            queue: cache.store.performsIO ? Self.makeQueue() : nil
        )
        let prepare: @Sendable (CacheExchangeTask) -> Void = { [self] exchange in
            lookUp(request, for: exchange, head: head, body: body)
        }
        // A store that reads files is looked up on the exchange's queue once it is resumed: the
        // caller may be an event loop (a redirect's next hop is made from the last one's end).
        if cache.store.performsIO {
            exchange.prepareOnResume(using: prepare)
        } else {
            prepare(exchange)
        }
        return exchange
    }

    /// A queue for one exchange with a store that reads and writes files: its lookup and the
    /// network's events run there, in order, off the transport's threads.
    private static func makeQueue() -> DispatchQueue {
        DispatchQueue(label: "Courier.HTTPCache.exchange", target: .global())
    }

    /// Looks `request` up and sets `exchange` to play what is stored, ask the network, or both.
    private func lookUp(
        _ request: HTTPCacheRequest,
        for exchange: CacheExchangeTask,
        head: RequestHead,
        body: RequestBody?
    ) {
        switch cache.lookup(request, now: Date()) {
        case .hit(let cached):
            exchange.configure(plan: .play(cached))
        case .hitAndRefresh(let cached, let conditionalHeaders):
            // The lookup took the key's refresh: a request cancelled meanwhile gives it back.
            if exchange.configure(plan: .play(cached)) {
                refresh(head, body: body, adding: conditionalHeaders, stored: cached, request: request)
            } else {
                cache.finishRefresh(forKey: cached.entry.key)
            }
        case .revalidate(let cached, let conditionalHeaders):
            var withConditions = head
            withConditions.addHeaders(conditionalHeaders, replacing: true)
            let conditional = withConditions
            // A 304 to the cache's own conditions that matches nothing stored is no answer for
            // a caller who asked without them: the request then goes again as it was made.
            let callerIsConditional = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"]
                .contains { head.headers.value(for: $0) != nil }
            let base = self.base
            var resend: (@Sendable (CacheExchangeTask) -> any TransportTask)?
            if !callerIsConditional {
                resend = { exchange in base.makeTask(for: head, body: body, eventHandler: exchange) }
            }
            exchange.configure(
                plan: .network(revalidating: cached),
                network: { exchange in base.makeTask(for: conditional, body: body, eventHandler: exchange) },
                resend: resend
            )
        case .miss:
            let base = self.base
            exchange.configure(
                plan: .network(revalidating: nil),
                network: { exchange in base.makeTask(for: head, body: body, eventHandler: exchange) }
            )
        case .gatewayTimeout:
            exchange.configure(plan: .gatewayTimeout)
        }
    }

    /// Refreshes `stored` in the background (`stale-while-revalidate`): the answer is stored or
    /// merged, its cookies reach the session's storage, and nobody waits for it.
    private func refresh(
        _ head: RequestHead,
        body: RequestBody?,
        adding conditionalHeaders: HTTPHeaders,
        stored: HTTPCachedResponse,
        request: HTTPCacheRequest
    ) {
        var withConditions = head
        withConditions.addHeaders(conditionalHeaders, replacing: true)
        let conditional = withConditions
        let refresh = CacheExchangeTask(
            cache: cache,
            request: request,
            handler: nil,
            refreshesKey: stored.entry.key,
            cookies: cookies,
            queue: cache.store.performsIO ? Self.makeQueue() : nil
        )
        let base = self.base
        refresh.configure(
            plan: .network(revalidating: stored),
            network: { exchange in base.makeTask(for: conditional, body: body, eventHandler: exchange) }
        )
        refresh.resume()
    }
}
