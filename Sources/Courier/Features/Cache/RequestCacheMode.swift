import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How one request uses the HTTP cache, after fetch's `RequestCache`: set it per request to go
/// around the cache, refresh it, or answer offline from it.
///
/// Only a session with an ``HTTPCache`` uses it; without one every mode goes to the network.
/// Only `GET` and `HEAD` responses are ever stored or served, whatever the mode.
public enum RequestCacheMode: String, CaseIterable, Hashable, Sendable {
    /// RFC 9111's rules: a fresh stored response is served without the network; a stale one is
    /// revalidated with a conditional request (or served while it is refreshed in the background,
    /// within its `stale-while-revalidate` window); the request's own `Cache-Control` is obeyed;
    /// the response is stored when it may be.
    case `default`
    /// As if there were no cache: nothing is looked up, and the response is not stored. (The
    /// entries for the URL are still invalidated by an unsafe method's response.)
    case noStore
    /// Goes to the network without looking up, with no conditional headers, and stores the
    /// response when it may be stored: a forced refresh.
    case reload
    /// Revalidates any stored response with the server (a conditional request) even if it is
    /// fresh; without a stored response (or one without `ETag` and `Last-Modified`), goes to
    /// the network. Stores the response.
    case noCache
    /// Serves any stored response that matches the request, fresh or stale, without the network;
    /// without one, goes to the network and stores the response.
    case forceCache
    /// Serves any stored response that matches, fresh or stale, without the network; without
    /// one, answers `504 Gateway Timeout` without the network: an offline mode.
    case onlyIfCached
}

extension RequestCacheMode {
    /// The mode a `URLRequest`'s cache policy asks for, so that a request built with one (or a
    /// `URLSessionConfiguration`'s `requestCachePolicy`) uses Courier's cache as it would have
    /// used a `URLCache`.
    init(_ policy: URLRequest.CachePolicy) {
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData: self = .reload
        case .reloadRevalidatingCacheData: self = .noCache
        case .returnCacheDataElseLoad: self = .forceCache
        case .returnCacheDataDontLoad: self = .onlyIfCached
        default: self = .default
        }
    }
}
