import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides what a request does with a redirect: follow it, follow it with another request, or
/// stop and take the `3xx` (with its body) as the response.
///
/// Courier follows redirects itself, on both transports, so a handler sees every redirect the
/// same way over URLSession and AsyncHTTPClient, and on Linux. Before the handler is asked,
/// Courier has applied the rules every redirect gets (see ``Redirect``): the method table, the
/// body and credential headers left behind, the limit, the loop check and the refusal of an
/// `https` to `http` downgrade. A handler may change the proposed request (add a header, point
/// it elsewhere); what it returns is checked as a request's own URL and headers are.
///
/// Set one per session (`Session(redirectHandler:)`) or per request (``Request/redirect(using:)``,
/// which wins). ``Redirector`` covers the usual cases; implement this protocol to decide
/// asynchronously (to ask something else first). It runs off the transport's threads, while
/// the `3xx`'s body is held (up to ``Redirect/maximumHeldBodyBytes``), and only for redirects
/// Courier would follow: a `3xx` without a usable `Location` is the response without asking.
public protocol RedirectHandler: Sendable {
    /// Returns the request to send next in place of `redirectRequest`, or `nil` to stop and make
    /// `response` (the `3xx`) the request's response.
    ///
    /// - Parameters:
    ///   - request: The request being redirected.
    ///   - redirectRequest: The request Courier proposes to send next.
    ///   - response: The redirect.
    func request(
        _ request: Request,
        willBeRedirectedTo redirectRequest: URLRequest,
        for response: HTTPURLResponse
    ) async -> URLRequest?
}
