/// The challenge of a `401` (or `407`) that Courier answers: the strongest one it supports.
///
/// A server may offer several schemes and, for Digest, several algorithms (RFC 7616 §3.7 has
/// it list them in its order of preference, but a client picks the strongest it can answer).
/// The order is Digest with SHA-512-256, SHA-512, SHA-256, then MD5, then Basic; among equals,
/// the first listed wins, so a `-sess` form is taken only when the server lists it first.
/// Challenges Courier cannot answer (other schemes, unknown algorithms, a Digest challenge
/// without realm or nonce) are passed over, never a reason to fail on their own.
enum PreferredChallenge: Sendable, Equatable {
    /// Answer with Digest.
    case digest(DigestAuthentication)
    /// Answer with Basic; the realm, when the challenge gave one, names the protection space.
    case basic(realm: String?)

    /// The strongest challenge in `challenges` that Courier can answer, or `nil` if none.
    ///
    /// - Parameters:
    ///   - challenges: Every challenge of the response's `WWW-Authenticate` (or
    ///     `Proxy-Authenticate`) fields, as ``AuthenticationChallenge/parse(_:)`` reads them.
    ///   - bodyAvailable: Whether the request's body can be hashed; when it cannot, a Digest
    ///     challenge offering `auth-int` alone is passed over.
    static func strongest(in challenges: [AuthenticationChallenge], bodyAvailable: Bool) -> PreferredChallenge? {
        var best: (choice: PreferredChallenge, strength: Int)?
        for challenge in challenges {
            let candidate: (PreferredChallenge, Int)
            if challenge.hasScheme("Digest") {
                guard let digest = try? DigestAuthentication(challenge) else { continue }
                do {
                    _ = try digest.qualityOfProtection(bodyAvailable: bodyAvailable)
                } catch {
                    continue
                }
                candidate = (.digest(digest), 1 + digest.algorithm.strength)
            } else if challenge.hasScheme("Basic") {
                candidate = (.basic(realm: challenge.parameter("realm")), 1)
            } else {
                continue
            }
            if candidate.1 > best?.strength ?? 0 { best = candidate }
        }
        return best?.choice
    }
}
