import Foundation

/// How a URL is written into logs and metrics: never with its user name or password, and with
/// the values of query items that carry secrets replaced.
///
/// Use it to write URLs into your own logs the way Courier's monitors do.
public struct URLRedaction: Sendable, Hashable {
    /// Names of query items whose values are replaced by `REDACTED`, compared without regard to
    /// case.
    public var secretQueryItemNames: Set<String>

    /// Query item names that commonly carry a secret: tokens, keys, signatures, passwords and
    /// OAuth codes (`access_token`, `api_key`, `client_secret`, `code`, `key`, `password`,
    /// `signature`, `token`, AWS's `X-Amz-Signature`, `X-Amz-Credential`,
    /// `X-Amz-Security-Token`, and a few more spellings).
    public static let commonSecretQueryItemNames: Set<String> = [
        "access_token", "api_key", "api-key", "apikey", "auth", "client_secret", "code", "id_token", "key",
        "passwd", "password", "refresh_token", "secret", "sig", "signature", "token", "x-amz-credential",
        "x-amz-security-token", "x-amz-signature",
    ]

    /// Redaction of the user name, the password, and the values of query items named in
    /// `secretQueryItemNames` (``commonSecretQueryItemNames`` by default).
    public init(secretQueryItemNames: Set<String> = URLRedaction.commonSecretQueryItemNames) {
        self.secretQueryItemNames = Set(secretQueryItemNames.map { $0.lowercased() })
    }

    /// `url` as logs show it: no user name, password or fragment, and secret query values
    /// replaced by `REDACTED`. A URL Foundation cannot take apart shows as its scheme and host
    /// alone, since anything else in it might be a secret.
    public func string(for url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return "\(url.scheme ?? "")://\(url.host ?? "")"
        }
        components.user = nil
        components.password = nil
        components.fragment = nil
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                let name = (item.name.removingPercentEncoding ?? item.name).lowercased()
                guard item.value != nil, secretQueryItemNames.contains(name) else { return item }
                return URLQueryItem(name: item.name, value: "REDACTED")
            }
        }
        return components.string ?? "\(url.scheme ?? "")://\(url.host ?? "")"
    }
}
