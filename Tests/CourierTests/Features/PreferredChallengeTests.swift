import Testing

@testable import Courier

@Suite struct PreferredChallengeTests {
    private func strongest(_ field: String, bodyAvailable: Bool = true) -> PreferredChallenge? {
        PreferredChallenge.strongest(in: AuthenticationChallenge.parse(field), bodyAvailable: bodyAvailable)
    }

    private func digestAlgorithm(_ field: String, bodyAvailable: Bool = true) -> String? {
        guard case .digest(let digest) = strongest(field, bodyAvailable: bodyAvailable) else { return nil }
        return digest.algorithm.name + (digest.isSessionAlgorithm ? "-sess" : "")
    }

    /// The strongest algorithm wins whatever the order the server lists them in.
    @Test func prefersTheStrongestDigestAlgorithm() {
        let md5 = #"Digest realm="r", nonce="n", algorithm=MD5"#
        let sha256 = #"Digest realm="r", nonce="n", algorithm=SHA-256"#
        let sha512_256 = #"Digest realm="r", nonce="n", algorithm=SHA-512-256"#
        let basic = #"Basic realm="r""#
        #expect(digestAlgorithm([basic, md5, sha256].joined(separator: ", ")) == "SHA-256")
        #expect(digestAlgorithm([sha256, md5].joined(separator: ", ")) == "SHA-256")
        #expect(digestAlgorithm([md5, sha512_256, sha256, basic].joined(separator: ", ")) == "SHA-512-256")
        #expect(digestAlgorithm([basic, md5].joined(separator: ", ")) == "MD5")
        // A Digest challenge naming no algorithm is MD5.
        #expect(digestAlgorithm(#"Basic realm="r", Digest realm="r", nonce="n""#) == "MD5")
        // Between equals, the first listed: here the `-sess` form.
        #expect(digestAlgorithm(#"Digest realm="r", nonce="n", algorithm=SHA-256-sess, \#(sha256)"#) == "SHA-256-sess")
    }

    /// Basic is taken when no Digest challenge can be answered.
    @Test func fallsBackToBasic() {
        #expect(strongest(#"Bearer, Basic realm="simple""#) == .basic(realm: "simple"))
        #expect(strongest("Basic") == .basic(realm: nil))
        #expect(strongest(#"Digest realm="r", nonce="n", algorithm=SHA-1, Basic realm="b""#) == .basic(realm: "b"))
        #expect(strongest(#"Digest nonce="n", Basic realm="b""#) == .basic(realm: "b"), "no realm")
        #expect(strongest(#"Digest realm="r", Basic realm="b""#) == .basic(realm: "b"), "no nonce")
    }

    /// Unsupported algorithms and schemes are passed over, not a failure.
    @Test func ignoresWhatItCannotAnswer() {
        #expect(strongest("") == nil)
        #expect(strongest("Bearer, Negotiate abc==, NTLM") == nil)
        #expect(strongest(#"Digest realm="r", nonce="n", algorithm=SHA-1"#) == nil)
        #expect(
            digestAlgorithm(#"Digest realm="r", nonce="n", algorithm=SHA3-256, Digest realm="r", nonce="n""#) == "MD5"
        )
    }

    /// `auth-int` alone is answerable only with a body to hash.
    @Test func passesOverAuthIntWithoutABody() {
        let field = #"Digest realm="r", nonce="n", qop="auth-int", algorithm=SHA-256, Basic realm="b""#
        #expect(digestAlgorithm(field, bodyAvailable: true) == "SHA-256")
        #expect(strongest(field, bodyAvailable: false) == .basic(realm: "b"))
    }

    /// The choice carries the parsed challenge, stale flag included.
    @Test func carriesTheChallenge() throws {
        let choice = strongest(#"Digest realm="r", nonce="new", stale=true, opaque="o", qop="auth""#)
        guard case .digest(let digest) = choice else {
            Issue.record("expected Digest, got \(String(describing: choice))")
            return
        }
        #expect(digest.isStale && digest.nonce == "new" && digest.opaque == "o" && digest.realm == "r")
        #expect(digest.qualitiesOfProtection == [.authentication])
    }
}
