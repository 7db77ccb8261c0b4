import Foundation

/// Where a session keeps cookies: it stores what each response sets and asks for the `Cookie`
/// header of each request, redirect hops included, each by its own URL.
///
/// Two implementations ship: ``CookieJar``, Courier's own RFC 6265 store (the same on every
/// platform and transport), and ``HTTPCookieStorageAdapter``, which keeps cookies in a Foundation
/// `HTTPCookieStorage` (to share them with other `URLSession` code) while still reading and
/// matching them by Courier's rules. Adopt it to keep cookies elsewhere (a database, a keychain).
///
/// A protocol rather than a closed set of options: the session holds one `any CookieStorage` and
/// calls the same two methods on both transports, and an application can bring its own store.
public protocol CookieStorage: Sendable {
    /// Stores the cookies a response set.
    ///
    /// - Parameters:
    ///   - setCookieFields: The response's `Set-Cookie` field values, one per field, in order
    ///     (never joined with commas: a cookie's `Expires` holds one).
    ///   - url: The URL of the request the response answers (the hop's own URL on a redirect).
    func store(setCookieFields: [String], from url: URL)

    /// The `Cookie` header value to send on a request to `url`, or `nil` when no cookie applies.
    ///
    /// Called once per request sent (each redirect hop too), just before sending: the cookies'
    /// last-access times are updated.
    func cookieHeader(for url: URL) -> String?
}
