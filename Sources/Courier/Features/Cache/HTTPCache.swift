import Foundation

/// A private HTTP cache that Courier runs itself, by RFC 9111's rules, the same on every
/// transport and platform: give one to a session to turn caching on.
///
/// ```swift
/// let cache = HTTPCache.memory(byteLimit: 20 << 20)
/// let onDisk = try HTTPCache.disk(directory: cachesFolder.appendingPathComponent("http"), byteLimit: 200 << 20)
/// ```
///
/// Stores `GET` and `HEAD` responses that may be stored (not `no-store`; `private` is fine),
/// keyed by method, full URL and the request headers `Vary` names; serves them while fresh
/// (`max-age`, else `Expires` − `Date`, else, if ``Configuration/heuristicFreshness`` is on, 10 %
/// of the time since `Last-Modified`); revalidates stale ones with `If-None-Match` and
/// `If-Modified-Since`, merging a `304`; honours `no-cache`, `must-revalidate`, `max-stale`,
/// `min-fresh`, `only-if-cached`, `stale-while-revalidate` and `stale-if-error`. A `POST`,
/// `PUT`, `DELETE` or `PATCH` that succeeds drops the entries of its URL. Each request may
/// choose a ``RequestCacheMode``.
///
/// Bodies move in chunks both ways: a large cached download stays in constant memory (on disk).
public final class HTTPCache: Sendable {
    /// Where a cache keeps its entries.
    public struct Storage: Sendable {
        enum Kind: Sendable {
            case memory(byteLimit: Int64)
            case disk(directory: URL, byteLimit: Int64)
        }

        let kind: Kind

        /// In memory, at most `byteLimit` bytes (bodies and headers); gone with the process.
        public static func memory(byteLimit: Int64 = 20 << 20) -> Storage {
            Storage(kind: .memory(byteLimit: byteLimit))
        }

        /// In `directory` (created if needed, private to the user), at most `byteLimit` bytes;
        /// entries survive restarts.
        public static func disk(directory: URL, byteLimit: Int64 = 200 << 20) -> Storage {
            Storage(kind: .disk(directory: directory, byteLimit: byteLimit))
        }
    }

    /// How a cache stores and judges responses.
    public struct Configuration: Sendable {
        /// Where entries go. In memory, 20 MiB, unless set.
        public var storage: Storage
        /// Whether a response without `max-age` or `Expires` but with `Last-Modified` is fresh
        /// for 10 % of its age at the time (RFC 9111 §4.2.2), for URLs without a query. Off:
        /// such responses are revalidated every time.
        public var heuristicFreshness: Bool

        /// A configuration; every parameter has a default.
        public init(storage: Storage = .memory(), heuristicFreshness: Bool = false) {
            self.storage = storage
            self.heuristicFreshness = heuristicFreshness
        }
    }

    /// The rules the cache applies.
    let policy: HTTPCachePolicy
    /// Where its entries are.
    let store: any HTTPCacheStore
    /// The keys whose background refresh (`stale-while-revalidate`) is under way.
    private let refreshing = Protected(Set<String>())

    /// A cache as `configuration` says.
    ///
    /// - Throws: ``CourierError`` when a disk store's directory cannot be created or read.
    public init(_ configuration: Configuration = Configuration()) throws {
        policy = HTTPCachePolicy(heuristicFreshness: configuration.heuristicFreshness)
        switch configuration.storage.kind {
        case .memory(let byteLimit): store = HTTPCacheMemoryStore(byteLimit: byteLimit)
        case .disk(let directory, let byteLimit):
            store = try HTTPCacheDiskStore(directory: directory, byteLimit: byteLimit)
        }
    }

    /// A cache over `store`: for tests and other stores.
    init(store: any HTTPCacheStore, heuristicFreshness: Bool = false) {
        policy = HTTPCachePolicy(heuristicFreshness: heuristicFreshness)
        self.store = store
    }

    /// A cache in memory of at most `byteLimit` bytes.
    public static func memory(byteLimit: Int64 = 20 << 20, heuristicFreshness: Bool = false) -> HTTPCache {
        HTTPCache(store: HTTPCacheMemoryStore(byteLimit: byteLimit), heuristicFreshness: heuristicFreshness)
    }

    /// A cache in `directory` of at most `byteLimit` bytes, keeping what an earlier one stored there.
    ///
    /// - Throws: ``CourierError`` when the directory cannot be created or read.
    public static func disk(
        directory: URL,
        byteLimit: Int64 = 200 << 20,
        heuristicFreshness: Bool = false
    ) throws -> HTTPCache {
        try HTTPCache(
            Configuration(
                storage: .disk(directory: directory, byteLimit: byteLimit),
                heuristicFreshness: heuristicFreshness
            )
        )
    }

    /// The bytes the stored entries take.
    public var currentBytes: Int64 { store.totalBytes }

    /// Removes every stored response.
    public func removeAll() {
        store.removeAll()
    }

    // MARK: - For the request core

    /// What to do before sending `request` at `now`.
    func lookup(_ request: HTTPCacheRequest, now: Date) -> HTTPCacheLookup {
        let key = HTTPCacheKey.primary(method: request.method, url: request.url)
        let looksUp =
            request.mode != .noStore && request.mode != .reload && HTTPCachePolicy.isCacheableMethod(request.method)
        let stored = looksUp ? key.flatMap(store.entry(forKey:)) : nil
        switch policy.decision(for: request, entry: stored?.entry, now: now) {
        case .serve(let age):
            guard let stored else { return .miss }
            return .hit(HTTPCachedResponse(entry: stored.entry, body: stored.body, age: age))
        case .serveStaleAndRefresh(let age, let conditionalHeaders):
            guard let stored else { return .miss }
            let response = HTTPCachedResponse(entry: stored.entry, body: stored.body, age: age)
            let first = refreshing.withLock { $0.insert(stored.entry.key).inserted }
            return first ? .hitAndRefresh(response, conditionalHeaders: conditionalHeaders) : .hit(response)
        case .revalidate(let conditionalHeaders):
            guard let stored else { return .miss }
            let age = HTTPCachePolicy.seconds(policy.currentAge(of: stored.entry, now: now))
            let response = HTTPCachedResponse(entry: stored.entry, body: stored.body, age: age)
            return .revalidate(response, conditionalHeaders: conditionalHeaders)
        case .network:
            return .miss
        case .gatewayTimeout:
            return .gatewayTimeout
        }
    }

    /// A writer for the body of `response` to `request` when it may be stored, else `nil`
    /// (then a stored entry the response says must not be kept, `no-store`, is removed).
    /// Write the body's chunks as they arrive and ``HTTPCacheEntryWriter/commit(statusCode:responseHeaders:)`` at its end;
    /// ``HTTPCacheEntryWriter/discard()`` if it fails.
    func writer(
        for request: HTTPCacheRequest,
        response: HTTPCacheResponseHead,
        requestTime: Date,
        responseTime: Date
    ) -> HTTPCacheEntryWriter? {
        guard
            let entry = policy.entryToStore(
                for: request,
                response: response,
                requestTime: requestTime,
                responseTime: responseTime
            )
        else {
            if CacheControl(responseHeaders: response.headers).noStore,
                let key = HTTPCacheKey.primary(method: request.method, url: request.url)
            {
                // Only what was stored when the request went out: a response stored since
                // answered a later request.
                store.removeEntry(forKey: key) { $0.responseTime <= requestTime }
            }
            return nil
        }
        return store.makeWriter(for: entry)
    }

    /// `stored` updated by the `304` answering its revalidation (sent at `requestTime`, answered
    /// at `responseTime`), and saved (removed instead when the `304` or the request says
    /// `no-store`); answer with its head and body. `nil` when the `304` is for
    /// another representation: the entry is removed, and the request should be sent again
    /// without conditional headers.
    func mergeNotModified(
        _ notModified: HTTPCacheResponseHead,
        into stored: HTTPCachedResponse,
        for request: HTTPCacheRequest,
        requestTime: Date,
        responseTime: Date,
        now: Date
    ) -> HTTPCachedResponse? {
        guard
            let merged = policy.merging(
                notModified: notModified,
                into: stored.entry,
                requestTime: requestTime,
                responseTime: responseTime
            )
        else {
            store.removeEntry(forKey: stored.entry.key, ifSameVersionAs: stored.entry)
            return nil
        }
        // A `no-store` on the 304 or the request: answered this once, and kept no longer.
        if CacheControl(responseHeaders: notModified.headers).noStore
            || CacheControl(requestHeaders: request.headers).noStore
        {
            store.removeEntry(forKey: stored.entry.key, ifSameVersionAs: stored.entry)
        } else if request.mode != .noStore {
            store.updateEntry(merged, replacing: stored.entry)
        }
        let age = HTTPCachePolicy.seconds(policy.currentAge(of: merged, now: now))
        return HTTPCachedResponse(entry: merged, body: stored.body, age: age)
    }

    /// Updates or removes the stored `GET` response a `HEAD` request's `200` describes (RFC 9111
    /// §4.3.5): its headers take the `HEAD` response's when both name the same representation
    /// (the same strong `ETag`, or without one the same `Last-Modified` and `Content-Length`);
    /// otherwise the stored body is out of date and the entry goes. A `noStore` request changes
    /// nothing.
    func freshen(
        after request: HTTPCacheRequest,
        response: HTTPCacheResponseHead,
        requestTime: Date,
        responseTime: Date
    ) {
        guard request.method == "HEAD", response.statusCode == 200, request.mode != .noStore,
            let key = HTTPCacheKey.primary(method: "GET", url: request.url),
            let stored = store.entry(forKey: key),
            stored.entry.matches(requestHeaders: request.headers)
        else { return }
        // A request that says `no-store` may not update the entry: it goes, as a 304 to one does.
        if CacheControl(requestHeaders: request.headers).noStore {
            store.removeEntry(forKey: key, ifSameVersionAs: stored.entry)
        } else if let freshened = policy.freshening(
            stored.entry,
            withHeadResponse: response,
            requestTime: requestTime,
            responseTime: responseTime
        ) {
            store.updateEntry(freshened, replacing: stored.entry)
        } else {
            store.removeEntry(forKey: key, ifSameVersionAs: stored.entry)
        }
    }

    /// The stored response to answer `request` with at `now` because the network failed, or
    /// answered with a status in ``staleIfErrorStatuses``: within its `stale-if-error` window.
    func staleResponseOnError(for request: HTTPCacheRequest, now: Date) -> HTTPCachedResponse? {
        guard let key = HTTPCacheKey.primary(method: request.method, url: request.url),
            let stored = store.entry(forKey: key),
            policy.mayServeStaleOnError(stored.entry, for: request, now: now)
        else { return nil }
        let age = HTTPCachePolicy.seconds(policy.currentAge(of: stored.entry, now: now))
        return HTTPCachedResponse(entry: stored.entry, body: stored.body, age: age)
    }

    /// The statuses `stale-if-error` treats as errors (RFC 5861 §4).
    static let staleIfErrorStatuses: Set<Int> = [500, 502, 503, 504]

    /// Removes the entries an unsafe `request`'s `response` invalidates (RFC 9111 §4.4). Call it
    /// for every response, whatever the request's mode.
    func invalidate(after request: HTTPCacheRequest, response: HTTPCacheResponseHead) {
        for key in policy.invalidatedKeys(for: request, response: response) { store.removeEntry(forKey: key) }
    }

    /// Ends the background refresh of `key` that ``HTTPCacheLookup/hitAndRefresh(_:conditionalHeaders:)``
    /// started, so that a later stale lookup may start another.
    func finishRefresh(forKey key: String) {
        refreshing.withLock { _ = $0.remove(key) }
    }

    /// The head of the `504 Gateway Timeout` answered to an `only-if-cached` request with nothing
    /// stored.
    static let gatewayTimeoutHead = HTTPCacheResponseHead(statusCode: 504, headers: ["Content-Length": "0"])
}
