import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers a server's `401` with a credential, as URLSession would, but identically over every
/// transport and on Linux: the request's own credential (``Request/authenticate(with:)``), only
/// ever to the origin the attempt was sent to (or its `https` upgrade), or one stored in the session's
/// `URLCredentialStorage` for the challenge's protection space (host, port, scheme, realm and
/// authentication method).
///
/// Every challenge in `WWW-Authenticate` is read (``AuthenticationChallenge``), and the strongest
/// scheme Courier supports is answered (``PreferredChallenge``): Digest per RFC 7616
/// (``DigestAuthentication``), then Basic.
struct ChallengeResponder: Sendable {
    /// The request's own credential, and the URL whose origin (or its `https` upgrade) it may be sent to.
    let credential: (credential: URLCredential, origin: URL)?
    /// Where stored credentials are looked up, and credentials the server accepted are kept
    /// (as their persistence says).
    let storage: URLCredentialStorage?
    /// The session's Digest nonce counts, shared by its requests; `nil` counts each answer as a
    /// nonce's first.
    let nonceCounts: Protected<DigestAuthentication.NonceCounter>?

    init(
        credential: (credential: URLCredential, origin: URL)?,
        storage: URLCredentialStorage?,
        nonceCounts: Protected<DigestAuthentication.NonceCounter>?
    ) {
        self.credential = credential
        self.storage = storage
        self.nonceCounts = nonceCounts
    }

    /// A request answering a challenge: `next` carries the credential.
    struct Answer: Sendable {
        let next: RequestHead
        /// The scheme answered, as Courier names it (`Basic`, `Digest`).
        let scheme: String
        /// Whether the challenge said the last answer's nonce had merely gone stale (Digest's
        /// `stale=true`): answering it again is not a second rejection.
        let isStale: Bool
        /// The credential to keep in the storage once the server accepts it, and where.
        let remember: (credential: URLCredential, space: URLProtectionSpace)?
    }

    /// The request that answers `response` to `head`, or `nil` when there is no challenge Courier
    /// supports or no credential for it. `body` is the request's body when it is in memory, for
    /// Digest's `auth-int`.
    ///
    /// - Throws: ``CourierError/Kind/credentialEncodingFailed`` when the credential cannot be
    ///   written for the scheme chosen (a Basic user name with a `:`): sending it would not be
    ///   the credential meant, and the `401` alone would hide why.
    func answer(to response: ResponseHead, for head: RequestHead, body: Data? = nil) throws(CourierError) -> Answer? {
        // A request that carries its own `Authorization` (a token from an interceptor, user
        // info from its URL) meant that one: a 401 to it is the answer, not a cue to try another.
        guard response.statusCode == 401, head.headers.value(for: "Authorization") == nil else { return nil }
        // Field by field where the fields are known: an unterminated quote in one must not swallow
        // the challenges of the next.
        let challenges = response.values(forHTTPHeaderField: "WWW-Authenticate").flatMap(AuthenticationChallenge.parse)
        guard !challenges.isEmpty else { return nil }
        guard let preferred = PreferredChallenge.strongest(in: challenges, bodyAvailable: body != nil) else {
            return nil
        }
        let space: URLProtectionSpace
        switch preferred {
        case .basic(let realm):
            space = Self.protectionSpace(for: head.url, realm: realm, method: NSURLAuthenticationMethodHTTPBasic)
        case .digest(let digest):
            space = Self.protectionSpace(
                for: head.url,
                realm: digest.realm,
                method: NSURLAuthenticationMethodHTTPDigest
            )
        }
        guard let (credential, isOwn) = credential(for: space, url: head.url),
            let user = credential.user, let password = credential.password
        else { return nil }
        let value: String
        let scheme: String
        var isStale = false
        switch preferred {
        case .basic:
            value = try BasicAuthentication.authorization(user: user, password: password)
            scheme = "Basic"
        case .digest(let digest):
            // Counted per origin and nonce across the session's requests: a server may hand one
            // nonce to several challenges, and takes a repeated count for a replay.
            let key = "\(space.protocol ?? "")://\(space.host):\(space.port) \(digest.nonce)"
            let count = nonceCounts?.withLock { $0.next(for: key) } ?? 1
            guard
                let header = try? digest.authorization(
                    username: user,
                    password: password,
                    method: head.method,
                    target: Self.requestTarget(of: head.url),
                    body: body,
                    nonceCount: count,
                    clientNonce: DigestAuthentication.makeClientNonce()
                )
            else { return nil }
            value = header
            scheme = "Digest"
            isStale = digest.isStale
        }
        var next = head
        next.setHeader(value, for: "Authorization")
        let remembers = isOwn && credential.persistence != .none && storage != nil
        return Answer(next: next, scheme: scheme, isStale: isStale, remember: remembers ? (credential, space) : nil)
    }

    /// What the request line names: the path and query as sent.
    static func requestTarget(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        let target = path.isEmpty ? "/" : path
        guard let query = url.query(percentEncoded: true) else { return target }
        return target + "?" + query
    }

    /// The credential for `space`: the request's own when `url` may receive it, else a stored one.
    private func credential(for space: URLProtectionSpace, url: URL) -> (URLCredential, isOwn: Bool)? {
        if let (own, origin) = credential, Self.mayReceiveOwnCredential(url, origin: origin) { return (own, true) }
        guard let storage, let stored = Self.storedSpace(matching: space, in: storage) else { return nil }
        if let credential = storage.defaultCredential(for: stored) { return (credential, false) }
        // Several stored for the space and none the default: the first by user name, so that the
        // choice does not change from one run to the next.
        guard let credential = storage.credentials(for: stored)?.sorted(by: { $0.key < $1.key }).first?.value else {
            return nil
        }
        return (credential, false)
    }

    /// Whether a request's own credential, given for `origin`, may answer a challenge from `url`:
    /// on the same origin, or on the same host moved from `http` to `https` on the default ports
    /// (a server that upgrades before it asks). Never the other way, and never another host.
    static func mayReceiveOwnCredential(_ url: URL, origin: URL) -> Bool {
        if RedirectPolicy.isSameOrigin(origin, url) { return true }
        return origin.scheme?.lowercased() == "http" && (origin.port ?? 80) == 80
            && url.scheme?.lowercased() == "https" && (url.port ?? 443) == 443
            && origin.host?.lowercased() == url.host?.lowercased()
    }

    /// The space in `storage` equal to `space` by its parts. FoundationNetworking compares
    /// protection spaces by identity, so a lookup with an equal space made anew finds nothing
    /// there (URLSession on Linux never used a stored credential); comparing the parts works on
    /// every platform. The protocol and the method are compared as they mean, not as spelled:
    /// on Linux `NSURLProtectionSpaceHTTPS` is the string `NSURLProtectionSpaceHTTPS`, not
    /// `https` as on Apple platforms, and `NSURLAuthenticationMethodDefault` is Basic for HTTP.
    static func storedSpace(matching space: URLProtectionSpace, in storage: URLCredentialStorage) -> URLProtectionSpace?
    {
        let scheme = Self.scheme(ofProtocol: space.protocol)
        let method = Self.method(space.authenticationMethod)
        let matching = storage.allCredentials.keys.filter { stored in
            stored.host.lowercased() == space.host.lowercased() && stored.port == space.port
                && Self.scheme(ofProtocol: stored.protocol) == scheme && stored.realm == space.realm
                && Self.method(stored.authenticationMethod) == method
        }
        // Two spellings of one space may both be stored: the one spelled as asked wins, then
        // the same one on every run, whatever the dictionary's order.
        return matching.min { left, right in
            let leftExact = left.protocol == space.protocol && left.authenticationMethod == space.authenticationMethod
            let rightExact =
                right.protocol == space.protocol && right.authenticationMethod == space.authenticationMethod
            if leftExact != rightExact { return leftExact }
            return (left.protocol ?? "", left.authenticationMethod) < (right.protocol ?? "", right.authenticationMethod)
        }
    }

    /// A protection space's protocol as a URL scheme (`http`, `https`), whichever way it is spelled.
    static func scheme(ofProtocol name: String?) -> String? {
        guard let name else { return nil }
        if name == NSURLProtectionSpaceHTTPS { return "https" }
        if name == NSURLProtectionSpaceHTTP { return "http" }
        return name.lowercased()
    }

    /// An authentication method with `NSURLAuthenticationMethodDefault` read as what it means for
    /// HTTP, Basic.
    private static func method(_ name: String) -> String {
        name == NSURLAuthenticationMethodDefault ? NSURLAuthenticationMethodHTTPBasic : name
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
