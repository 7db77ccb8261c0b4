import Foundation

/// Decides whether a response the session's ``HTTPCache`` may store is stored, and with which
/// headers: Alamofire's cached-response handler, for Courier's own cache.
///
/// It is asked only about responses the cache's rules allow it to store (RFC 9111), once their
/// body has arrived whole, off the transport's threads; the request completes once it has
/// answered, so a request made next finds the entry it decided on. Changing the
/// headers changes how long the entry stays fresh (add `Cache-Control: max-age=…`, say). Set one
/// per session (`Session(cachedResponseHandler:)`) or per request
/// (``Request/cacheResponse(using:)``, which wins); ``ResponseCacher`` covers the usual cases.
public protocol CachedResponseHandler: Sendable {
    /// Returns the head to store `response` under (as it is, or with changed headers), or `nil`
    /// to store nothing.
    func request(_ request: Request, willCache response: ResponseHead) async -> ResponseHead?
}

/// The ready-made ``CachedResponseHandler``s: store what the rules allow (the default), store
/// nothing, or change what is stored with a closure.
public struct ResponseCacher: CachedResponseHandler {
    /// What a ``ResponseCacher`` does with each storable response.
    public enum Behavior: Sendable {
        /// Store it as it is.
        case cache
        /// Store nothing.
        case doNotCache
        /// Store what the closure returns (`nil`: nothing).
        case modify(@Sendable (Request, ResponseHead) -> ResponseHead?)
    }

    /// Stores what the cache's rules allow: what a session does when given no handler.
    public static let cache = ResponseCacher(behavior: .cache)

    /// Stores nothing (the request still reads from the cache, as its mode says).
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)

    /// What this cacher does.
    public let behavior: Behavior

    /// A cacher that does `behavior`.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }

    /// A cacher that asks `closure` what to store for each response.
    public static func modify(
        using closure: @escaping @Sendable (Request, ResponseHead) -> ResponseHead?
    )
        -> ResponseCacher
    {
        ResponseCacher(behavior: .modify(closure))
    }

    /// Stores, skips or asks the closure, as ``behavior`` says.
    public func request(_ request: Request, willCache response: ResponseHead) async -> ResponseHead? {
        switch behavior {
        case .cache: return response
        case .doNotCache: return nil
        case .modify(let closure): return closure(request, response)
        }
    }
}

extension CachedResponseHandler where Self == ResponseCacher {
    /// Stores what the cache's rules allow (see ``ResponseCacher/cache``).
    public static var cache: ResponseCacher { ResponseCacher.cache }
    /// Stores nothing (see ``ResponseCacher/doNotCache``).
    public static var doNotCache: ResponseCacher { ResponseCacher.doNotCache }
    /// Asks `closure` what to store (see ``ResponseCacher/modify(using:)``).
    public static func modify(
        using closure: @escaping @Sendable (Request, ResponseHead) -> ResponseHead?
    )
        -> ResponseCacher
    {
        ResponseCacher.modify(using: closure)
    }
}
