import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers a server's `401` with a credential, as URLSession would, but identically over every
/// transport and on Linux: the request's own credential (``Request/authenticate(with:)``), only
/// ever to the origin the request was made for, or one stored in the session's
/// `URLCredentialStorage` for the challenge's protection space (host, port, scheme, realm and
/// authentication method).
///
/// Every challenge in `WWW-Authenticate` is read (``AuthenticationChallenge``), and the strongest
/// scheme Courier supports is answered.
struct ChallengeResponder: Sendable {
    /// The request's own credential, and the URL whose origin it may be sent to.
    let credential: (credential: URLCredential, origin: URL)?
    /// Where stored credentials are looked up, and credentials the server accepted are kept
    /// (as their persistence says).
    let storage: URLCredentialStorage?

    /// A request answering a challenge: `next` carries the credential.
    struct Answer: Sendable {
        let next: RequestHead
        /// The scheme answered, as the server named it (`Basic`).
        let scheme: String
        /// The credential to keep in the storage once the server accepts it, and where.
        let remember: (credential: URLCredential, space: URLProtectionSpace)?
    }

    /// The request that answers `response` to `head`, or `nil` when there is no challenge Courier
    /// supports or no credential for it.
    func answer(to response: ResponseHead, for head: RequestHead) -> Answer? {
        guard response.statusCode == 401, let field = response.value(forHTTPHeaderField: "WWW-Authenticate") else {
            return nil
        }
        let challenges = AuthenticationChallenge.parse(field)
        guard let basic = challenges.first(where: { $0.hasScheme("Basic") }) else { return nil }
        let space = Self.protectionSpace(
            for: head.url,
            realm: basic.parameter("realm"),
            method: NSURLAuthenticationMethodHTTPBasic
        )
        guard let (credential, isOwn) = credential(for: space, url: head.url),
            let user = credential.user, let password = credential.password
        else { return nil }
        var next = head
        let token = Data("\(user):\(password)".utf8).base64EncodedString()
        next.setHeader("Basic \(token)", for: "Authorization")
        let remembers = isOwn && credential.persistence != .none && storage != nil
        return Answer(next: next, scheme: basic.scheme, remember: remembers ? (credential, space) : nil)
    }

    /// The credential for `space`: the request's own when `url` is on its origin, else a stored one.
    private func credential(for space: URLProtectionSpace, url: URL) -> (URLCredential, isOwn: Bool)? {
        if let (own, origin) = credential, RedirectPolicy.isSameOrigin(origin, url) { return (own, true) }
        guard let storage, let stored = Self.storedSpace(matching: space, in: storage) else { return nil }
        if let credential = storage.defaultCredential(for: stored) { return (credential, false) }
        // Several stored for the space and none the default: the first by user name, so that the
        // choice does not change from one run to the next.
        guard let credential = storage.credentials(for: stored)?.sorted(by: { $0.key < $1.key }).first?.value else {
            return nil
        }
        return (credential, false)
    }

    /// The space in `storage` equal to `space` by its parts. FoundationNetworking compares
    /// protection spaces by identity, so a lookup with an equal space made anew finds nothing
    /// there (URLSession on Linux never used a stored credential); comparing the parts works on
    /// every platform.
    static func storedSpace(matching space: URLProtectionSpace, in storage: URLCredentialStorage) -> URLProtectionSpace?
    {
        storage.allCredentials.keys.first { stored in
            stored.host.lowercased() == space.host.lowercased() && stored.port == space.port
                && stored.protocol?.lowercased() == space.protocol?.lowercased() && stored.realm == space.realm
                && stored.authenticationMethod == space.authenticationMethod
        }
    }

    /// Keeps `credential`, which the server accepted, as the default for `space` in `storage`
    /// (under the space already there, if one is).
    static func remember(_ credential: URLCredential, for space: URLProtectionSpace, in storage: URLCredentialStorage) {
        storage.setDefaultCredential(credential, for: storedSpace(matching: space, in: storage) ?? space)
    }

    /// The protection space a challenge from `url`'s origin names.
    static func protectionSpace(for url: URL, realm: String?, method: String) -> URLProtectionSpace {
        let scheme = url.scheme?.lowercased() ?? "http"
        return URLProtectionSpace(
            host: url.host?.lowercased() ?? "",
            port: url.port ?? (scheme == "https" ? 443 : 80),
            protocol: scheme,
            realm: realm,
            authenticationMethod: method
        )
    }
}
