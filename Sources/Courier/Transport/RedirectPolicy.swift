import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What Courier does to a request a server redirects, on every transport: which responses are
/// followed, where to, with which method, and which headers are left behind.
///
/// The request core (`Request.Hops`) asks ``nextHop(status:location:method:from:)`` for every
/// redirect a transport reports (transports follow none), so every `Location` is checked by
/// ``URLValidation`` before a connection is made to it.
@_spi(CourierTransport)
public enum RedirectPolicy {
    /// Headers that carry credentials and must not follow a redirect to another origin.
    public static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// Headers that describe a body, dropped when a redirect turns the request into a GET.
    public static let bodyHeaders = ["Content-Length", "Content-Type", "Content-Encoding", "Transfer-Encoding"]

    /// Whether `status` is one of the redirects Courier follows (301, 302, 303, 307, 308).
    static func isRedirect(status: Int) -> Bool {
        status == 301 || status == 302 || status == 303 || status == 307 || status == 308
    }

    /// The request a redirect leads to.
    public struct Hop: Sendable, Equatable {
        /// Where the next request goes (absolute).
        public var url: URL
        /// The next request's method.
        public var method: String
        /// Whether the body is dropped (the method became GET), with the headers describing it.
        public var dropsBody: Bool
        /// Whether the hop leaves the origin, so ``credentialHeaders`` are dropped.
        public var leavesOrigin: Bool
    }

    /// What to do with a response head.
    public enum Decision: Sendable {
        /// Not a redirect Courier follows (not a 301, 302, 303, 307 or 308; no `Location`; one
        /// that is not a URL, or leads to another scheme than http or https): the response is
        /// the answer.
        case deliver
        /// Follow it.
        case follow(Hop)
        /// Refuse it: the `Location` is a URL Courier will not connect to (a port above 65535,
        /// no host). The error is a ``CourierError`` of kind ``CourierError/Kind/invalidURL``.
        case fail(CourierError)
    }

    /// Decides what a response with `status` and `location` (its `Location` header) means for a
    /// request made with `method` to `currentURL`.
    ///
    /// The method table is URLSession's and AsyncHTTPClient's: 303 turns anything but HEAD into
    /// GET; 301 and 302 turn POST into GET; 307 and 308 keep the method and body.
    public static func nextHop(status: Int, location: String?, method: String, from currentURL: URL) -> Decision {
        guard isRedirect(status: status), let location, !location.isEmpty,
            let next = URL(string: location, relativeTo: currentURL)?.absoluteURL,
            let scheme = next.scheme?.lowercased(), URLValidation.supportedSchemes.contains(scheme)
        else { return .deliver }
        if let problem = URLValidation.reason(rejecting: next, text: next.absoluteString) {
            return .fail(.invalidURL(next.absoluteString, reason: "the server redirected to it, and \(problem)"))
        }
        // User info in a Location is the server's to give, not to send on: it is dropped, so that
        // it reaches no request, record, monitor or log.
        var target = next
        // A Location without a fragment keeps the request's (RFC 9110 §10.2.2), which resolving
        // a reference by RFC 3986 drops: `/a#part` redirected to `/b` is `/b#part`. Fragments
        // never go on the wire; they are what the response's URL and the records say.
        if next.user != nil || next.password != nil,
            var components = URLComponents(url: next, resolvingAgainstBaseURL: false)
        {
            components.user = nil
            components.password = nil
            if let stripped = components.url { target = stripped }
        }
        // Parsed as text, which fails softly: URLComponents' fragment setter traps on what it
        // takes for a bad fragment, and this one came from a server's earlier Location.
        if next.fragment == nil, let fragment = currentURL.fragment(percentEncoded: true),
            let withFragment = URL(string: target.absoluteString + "#" + fragment)
        {
            target = withFragment
        }
        let upper = method.uppercased()
        let becomesGet = (status == 303 && upper != "HEAD") || ((status == 301 || status == 302) && upper == "POST")
        return .follow(
            Hop(
                url: target,
                method: becomesGet ? "GET" : method,
                dropsBody: becomesGet,
                leavesOrigin: !isSameOrigin(currentURL, target)
            )
        )
    }

    /// Whether going from `previous` to `next` drops from `https` to plain `http`.
    static func isDowngrade(from previous: URL, to next: URL) -> Bool {
        previous.scheme?.lowercased() == "https" && next.scheme?.lowercased() == "http"
    }

    /// What makes a request the same as another for loop detection: its method, its URL with
    /// scheme and host lowercased, the default port and the fragment left out, and its cookies.
    /// A server may rightly send a client back to a URL it visited with other cookies (a login
    /// that sets one) or another method (a POST answered 303 to itself); the same request again
    /// can only go round.
    static func loopKey(of head: RequestHead) -> String {
        let url = head.url
        var key = head.method.rawValue + " " + (url.scheme?.lowercased() ?? "") + "://"
        key += url.host?.lowercased() ?? ""
        if let port = url.port, port != effectivePort(url.scheme) { key += ":\(port)" }
        // As sent: `/docs` and `/docs/` are two resources (a server rightly sends one to the
        // other), and so are `/a%2Fb` and `/a/b`.
        let path = url.path(percentEncoded: true)
        key += path.isEmpty ? "/" : path
        if let query = url.query(percentEncoded: true) { key += "?" + query }
        if let cookie = head.headers.value(for: "Cookie") { key += "\ncookie: " + cookie }
        return key
    }

    /// Whether two URLs share scheme, host and (effective) port.
    public static func isSameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased()
            && effectivePort(first) == effectivePort(second)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? effectivePort(url.scheme)
    }

    private static func effectivePort(_ scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
