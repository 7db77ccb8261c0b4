import Foundation

/// How a URL is written into logs and metrics: never with its user name or password, and with
/// the values of query items that carry secrets replaced.
///
/// Use it to write URLs into your own logs the way Courier's monitors do.
public struct URLRedaction: Sendable, Hashable {
    /// Names of query items (and of `;name=value` path parameters) whose values are replaced by
    /// `REDACTED`, compared without regard to case.
    public var secretQueryItemNames: Set<String> {
        get { lowercasedNames }
        set { lowercasedNames = Set(newValue.map { $0.lowercased() }) }
    }
    private var lowercasedNames: Set<String>

    /// Query item names that commonly carry a secret: tokens, keys, signatures, passwords and
    /// OAuth codes (`access_token`, `api_key`, `client_secret`, `code`, `key`, `password`,
    /// `signature`, `token`, AWS's `X-Amz-Signature`, `X-Amz-Credential`,
    /// `X-Amz-Security-Token`, and a few more spellings).
    public static let commonSecretQueryItemNames: Set<String> = [
        "access_token", "api_key", "api-key", "apikey", "auth", "auth_token", "client_secret", "code", "id_token",
        "jsessionid", "jwt", "key", "passwd", "password", "private_token", "refresh_token", "secret", "session",
        "session_id", "sessionid", "sid", "sig", "signature", "token", "x-amz-credential", "x-amz-security-token",
        "x-amz-signature", "x-goog-credential", "x-goog-signature",
    ]

    /// Redaction of the user name, the password, and the values of query items named in
    /// `secretQueryItemNames` (``commonSecretQueryItemNames`` by default).
    public init(secretQueryItemNames: Set<String> = URLRedaction.commonSecretQueryItemNames) {
        lowercasedNames = Set(secretQueryItemNames.map { $0.lowercased() })
    }

    /// `url` as logs show it: no user name, password or fragment, and secret query values
    /// replaced by `REDACTED`. A URL Foundation cannot take apart shows as its scheme and host
    /// alone, since anything else in it might be a secret.
    public func string(for url: URL) -> String {
        let written = url.absoluteString
        if hasNothingToRedact(written) { return written }
        guard var components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: false) else {
            return "\(url.scheme ?? "")://\(url.host ?? "")"
        }
        components.user = nil
        components.password = nil
        components.fragment = nil
        if components.percentEncodedPath.contains(";") {
            components.percentEncodedPath = redactingParameters(in: components.percentEncodedPath)
        }
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                let name = (item.name.removingPercentEncoding ?? item.name).lowercased()
                guard item.value != nil, lowercasedNames.contains(name) else { return item }
                return URLQueryItem(name: item.name, value: "REDACTED")
            }
        }
        return components.string ?? "\(url.scheme ?? "")://\(url.host ?? "")"
    }

    /// Whether `written` has no user name or password (no `@`), no fragment (`#`), no path
    /// parameter (`;`) and no query item named like a secret: then it is written as it is.
    /// One pass over the bytes, where taking the URL apart costs tens of thousands of
    /// instructions on Linux; anything unusual takes the careful path.
    private func hasNothingToRedact(_ written: String) -> Bool {
        let utf8 = written.utf8
        guard !utf8.contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: ";") })
        else { return false }
        guard let questionMark = utf8.firstIndex(of: UInt8(ascii: "?")) else { return true }
        let query = written[written.index(after: questionMark)...]
        for item in query.split(separator: "&") {
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? item
            // A percent-encoded name is decoded by the careful path.
            if name.utf8.contains(UInt8(ascii: "%")) || name.utf8.contains(UInt8(ascii: "+")) { return false }
            if lowercasedNames.contains(name.lowercased()) { return false }
        }
        return true
    }

    /// `path` with the values of secret `;name=value` parameters of its segments replaced
    /// (`/cart;jsessionid=…`).
    private func redactingParameters(in path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            var parts = segment.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            for index in parts.indices.dropFirst() {
                guard let equals = parts[index].firstIndex(of: "=") else { continue }
                let name = String(parts[index][..<equals])
                if lowercasedNames.contains((name.removingPercentEncoding ?? name).lowercased()) {
                    parts[index] = name + "=REDACTED"
                }
            }
            return parts.joined(separator: ";")
        }.joined(separator: "/")
    }
}
