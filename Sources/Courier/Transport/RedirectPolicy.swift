import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What Courier does to a request a server redirects, on every transport.
enum RedirectPolicy {
    /// Headers that carry credentials and must not follow a redirect to another origin.
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// `request` without credential headers when it leaves the origin (scheme, host, port) of `previousURL`.
    static func strippingCredentials(from request: URLRequest, redirectedFrom previousURL: URL?) -> URLRequest {
        guard let previousURL, let nextURL = request.url, !isSameOrigin(previousURL, nextURL) else { return request }
        var request = request
        for name in credentialHeaders {
            request.setValue(nil, forHTTPHeaderField: name)
        }
        return request
    }

    /// Whether two URLs share scheme, host and (effective) port.
    static func isSameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased()
            && effectivePort(first) == effectivePort(second)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        if let port = url.port { return port }
        switch url.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
