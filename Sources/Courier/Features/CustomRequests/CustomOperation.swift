import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A custom request's work: the delegate it was made with, and the one each attempt runs (the
/// first attempt runs the original; each retry, the previous attempt's ``CustomRequestDelegate/repeated()``).
final class CustomOperation: Sendable {
    /// The delegate the request was made with, not yet started: what ``DataRequest/repeated()`` repeats.
    let original: any CustomRequestDelegate
    /// What the request reports as its URLRequest: the delegate's, or a placeholder naming it.
    let head: RequestHead
    /// Whether the session's interceptor retries the request too (not for a chain, whose links
    /// it retries already).
    let usesSessionInterceptor: Bool
    /// The delegate the last attempt ran, `nil` before the first.
    private let last = Protected<(any CustomRequestDelegate)?>(nil)

    init(_ delegate: any CustomRequestDelegate, usesSessionInterceptor: Bool = true) {
        original = delegate
        self.usesSessionInterceptor = usesSessionInterceptor
        head = Self.head(for: delegate)
    }

    /// The delegate for the next attempt.
    func nextDelegate() -> any CustomRequestDelegate {
        // `repeated()` is the caller's code: not under the lock. Attempts never overlap, so the
        // last one cannot change meanwhile.
        let previous = last.withLock { $0 }
        let next = previous?.repeated() ?? original
        last.withLock { $0 = next }
        return next
    }

    /// The delegate's own URLRequest if it gives one with a URL, else `GET courier-custom:` and
    /// its description.
    private static func head(for delegate: any CustomRequestDelegate) -> RequestHead {
        if let urlRequest = delegate.urlRequest, var head = RequestHead(urlRequest) {
            head.isURLChecked = true
            return head
        }
        let described = delegate.requestDescription.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
        let url = URL(string: "courier-custom:" + described) ?? placeholderURL
        var head = RequestHead(method: .get, url: url)
        head.isURLChecked = true
        return head
    }

    private static let placeholderURL = URL(fileURLWithPath: "/")
}
