import CourierHashes
import Foundation
import Testing

@testable import CourierTestServer

@Suite struct AuthRoutesTests {
    private func basic(_ user: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    @Test func basicAuthAcceptsTheRightCredentials() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/basic-auth/alice/s3cr:et",
                headers: [basic("alice", "s3cr:et")]
            )
            #expect(answer.status == 200)
            #expect(answer.json == .object(["authenticated": .bool(true), "user": .string("alice")]))
        }
    }

    @Test func basicAuthChallengesOtherwise() async throws {
        try await TestServer.withRunningServer { server in
            let wrong = try await expectSameAsHttpbin(
                server,
                "/basic-auth/alice/secret",
                headers: [basic("alice", "nope")],
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(wrong.status == 401)
            #expect(wrong.headers["WWW-Authenticate"] == ["Basic realm=\"Fake Realm\""])
            let missing = try await expectSameAsHttpbin(
                server,
                "/basic-auth/alice/secret",
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(missing.status == 401)
        }
    }

    @Test func hiddenBasicAuthAnswers404() async throws {
        try await TestServer.withRunningServer { server in
            let hidden = try await expectSameAsHttpbin(
                server,
                "/hidden-basic-auth/bob/pw",
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(hidden.status == 404)
            #expect(hidden.headers["WWW-Authenticate"].isEmpty)
            let shown = try await expectSameAsHttpbin(
                server,
                "/hidden-basic-auth/bob/pw",
                headers: [basic("bob", "pw")]
            )
            #expect(shown.json?["authenticated"] == .bool(true))
        }
    }

    @Test func bearerNeedsABearerToken() async throws {
        try await TestServer.withRunningServer { server in
            let missing = try await expectSameAsHttpbin(
                server,
                "/bearer",
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(missing.status == 401 && missing.headers["WWW-Authenticate"] == ["Bearer"])
            let basic = try await expectSameAsHttpbin(
                server,
                "/bearer",
                headers: [basic("a", "b")],
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(basic.status == 401)
            let good = try await expectSameAsHttpbin(server, "/bearer", headers: [("Authorization", "Bearer t0k.en")])
            #expect(good.json == .object(["authenticated": .bool(true), "token": .string("t0k.en")]))
        }
    }
}

/// httpbin's `/digest-auth` routes, answered here with hashes computed as RFC 2617 does (the
/// cross-check against Courier's own Digest answers is in CourierTests'
/// `DigestAuthenticationServerTests`).
@Suite struct DigestAuthRoutesTests {
    /// The parameters of a `WWW-Authenticate: Digest …` field, quoted values unquoted.
    private func challengeParameters(_ exchange: Exchange) throws -> [String: String] {
        let field = try #require(exchange.headers["WWW-Authenticate"].first)
        try #require(field.hasPrefix("Digest "))
        var parameters: [String: String] = [:]
        let pattern = /([a-z]+)=(?:"([^"]*)"|([^,\s]*))/
        for match in field.matches(of: pattern) {
            parameters[String(match.1)] = String(match.2 ?? match.3 ?? "")
        }
        return parameters
    }

    private func hash(_ text: String, _ algorithm: String) -> String {
        switch algorithm {
        case "SHA-256": SHA256.hexDigest(of: Array(text.utf8))
        case "SHA-512": SHA512.hexDigest(of: Array(text.utf8))
        default: MD5.hexDigest(of: Array(text.utf8))
        }
    }

    /// An `Authorization` for `challenge`, computed from the RFC's formulas.
    private func authorization(
        _ challenge: [String: String],
        user: String = "alice",
        password: String,
        target: String,
        qop: String? = "auth",
        body: [UInt8] = []
    ) -> (String, String) {
        let algorithm = challenge["algorithm"] ?? "MD5"
        let nonce = challenge["nonce"] ?? ""
        let firstHash = hash("\(user):\(challenge["realm"] ?? ""):\(password)", algorithm)
        var second = "GET:\(target)"
        if qop == "auth-int" {
            second +=
                ":"
                + (algorithm == "SHA-256"
                    ? SHA256.hexDigest(of: body)
                    : algorithm == "SHA-512" ? SHA512.hexDigest(of: body) : MD5.hexDigest(of: body))
        }
        let response: String
        var field = #"Digest username="\#(user)", realm="\#(challenge["realm"] ?? "")", nonce="\#(nonce)", "#
        field += #"uri="\#(target)", algorithm=\#(algorithm), opaque="\#(challenge["opaque"] ?? "")", "#
        if let qop {
            response = hash("\(firstHash):\(nonce):00000001:c0ffee:\(qop):\(hash(second, algorithm))", algorithm)
            field += #"qop=\#(qop), nc=00000001, cnonce="c0ffee", "#
        } else {
            response = hash("\(firstHash):\(nonce):\(hash(second, algorithm))", algorithm)
        }
        return ("Authorization", field + #"response="\#(response)""#)
    }

    @Test func challengesWithoutCredentials() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/digest-auth/auth/alice/secret",
                comparingHeaders: ["Set-Cookie", "Content-Type"],
                comparingBody: .none
            )
            #expect(answer.status == 401)
            #expect(answer.body.isEmpty)
            #expect(answer.headers["Set-Cookie"] == ["stale_after=never; Path=/", "fake=fake_value; Path=/"])
            let field = try #require(answer.headers["WWW-Authenticate"].first)
            #expect(
                field.wholeMatch(
                    of:
                        /Digest realm="me@kennethreitz.com", nonce="[0-9a-f]{32}", opaque="[0-9a-f]{32}", qop="auth", algorithm=MD5, stale=False/
                ) != nil,
                "\(field)"
            )
        }
    }

    /// The path picks the algorithm (its digest length shows in the nonce) and the `qop` offered.
    @Test(arguments: [
        ("/digest-auth/auth-int/u/p/SHA-256", "auth-int", "SHA-256", 64),
        ("/digest-auth/auth/u/p/SHA-512", "auth", "SHA-512", 128),
        ("/digest-auth/any/u/p/MD5", "auth, auth-int", "MD5", 32),
        ("/digest-auth/auth/u/p/sha-256", "auth", "MD5", 32),
        ("/digest-auth/auth/u/p/SHA-512-256/3", "auth", "MD5", 32),
    ])
    func challengesAsThePathSays(path: String, qop: String, algorithm: String, nonceLength: Int) async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(server.baseURL, path)
            #expect(answer.status == 401)
            let challenge = try challengeParameters(answer)
            #expect(challenge["qop"] == qop)
            #expect(challenge["algorithm"] == algorithm)
            #expect(challenge["nonce"]?.count == nonceLength)
            #expect(challenge["opaque"]?.count == nonceLength)
            #expect(challenge["stale"] == "False")
        }
    }

    @Test(arguments: ["MD5", "SHA-256", "SHA-512"], ["auth", "auth-int", nil])
    func acceptsTheRightAnswerOnly(algorithm: String, qop: String?) async throws {
        try await TestServer.withRunningServer { server in
            let path = "/digest-auth/\(qop ?? "both")/alice/s3cret/\(algorithm)"
            let first = try await Exchange.make(server.baseURL, path)
            let challenge = try challengeParameters(first)
            let body = Array("payload".utf8)
            let right = authorization(challenge, password: "s3cret", target: path, qop: qop, body: body)
            let accepted = try await Exchange.make(server.baseURL, path, headers: [right], body: body)
            #expect(accepted.status == 200)
            #expect(accepted.json == .object(["authenticated": .bool(true), "user": .string("alice")]))
            #expect(accepted.headers["Set-Cookie"] == ["fake=fake_value; Path=/"])

            let wrong = authorization(challenge, password: "guess", target: path, qop: qop, body: body)
            let refused = try await Exchange.make(server.baseURL, path, headers: [wrong], body: body)
            #expect(refused.status == 401)
            #expect(try challengeParameters(refused)["stale"] == "False")
            #expect(refused.headers["Set-Cookie"].contains("last_nonce=\(challenge["nonce"] ?? ""); Path=/"))
            if qop == "auth-int" {
                let otherBody = try await Exchange.make(
                    server.baseURL,
                    path,
                    headers: [right],
                    body: Array("other".utf8)
                )
                #expect(otherBody.status == 401, "auth-int covers the body")
            }
        }
    }

    /// The answer covers the target: sent for another path, it fails.
    @Test func theAnswerCoversTheTarget() async throws {
        try await TestServer.withRunningServer { server in
            let path = "/digest-auth/auth/alice/pw"
            let challenge = try challengeParameters(try await Exchange.make(server.baseURL, path))
            let elsewhere = authorization(challenge, password: "pw", target: "/digest-auth/auth/alice/pw/MD5")
            #expect(try await Exchange.make(server.baseURL, path, headers: [elsewhere]).status == 401)
        }
    }

    /// Stale nonces, driven by the cookies httpbin sets: `stale_after=0`, or reusing the nonce of
    /// `last_nonce`, gets a challenge with `stale=True` even for a right answer.
    @Test func marksStaleNonces() async throws {
        try await TestServer.withRunningServer { server in
            let path = "/digest-auth/auth/alice/pw/MD5/2"
            let first = try await Exchange.make(server.baseURL, path)
            #expect(first.headers["Set-Cookie"].first == "stale_after=2; Path=/")
            let challenge = try challengeParameters(first)
            let answer = authorization(challenge, password: "pw", target: path)

            let counted = try await Exchange.make(
                server.baseURL,
                path,
                headers: [answer, ("Cookie", "stale_after=2; fake=fake_value")]
            )
            #expect(counted.status == 200)
            #expect(counted.headers["Set-Cookie"] == ["fake=fake_value; Path=/", "stale_after=1; Path=/"])

            let exhausted = try await Exchange.make(
                server.baseURL,
                path,
                headers: [answer, ("Cookie", "stale_after=0")]
            )
            #expect(exhausted.status == 401)
            #expect(try challengeParameters(exhausted)["stale"] == "True")
            #expect(exhausted.headers["Set-Cookie"].contains("stale_after=2; Path=/"))

            let replayed = try await Exchange.make(
                server.baseURL,
                path,
                headers: [answer, ("Cookie", "last_nonce=\(challenge["nonce"] ?? "")")]
            )
            #expect(replayed.status == 401)
            #expect(try challengeParameters(replayed)["stale"] == "True")

            let never = try await Exchange.make(
                server.baseURL,
                "/digest-auth/auth/alice/pw/MD5/never",
                headers: [
                    authorization(challenge, password: "pw", target: "/digest-auth/auth/alice/pw/MD5/never"),
                    ("Cookie", "stale_after=never"),
                ]
            )
            #expect(never.status == 200 && never.headers["Set-Cookie"].contains("stale_after=never; Path=/"))
        }
    }

    /// `?require-cookie=1`: no cookie, a challenge; the wrong one, a 403.
    @Test func requiresTheCookieWhenAsked() async throws {
        try await TestServer.withRunningServer { server in
            let path = "/digest-auth/auth/alice/pw?require-cookie=1"
            let challenge = try challengeParameters(try await Exchange.make(server.baseURL, path))
            let answer = authorization(challenge, password: "pw", target: path)
            #expect(try await Exchange.make(server.baseURL, path, headers: [answer]).status == 401)
            let wrongCookie = try await Exchange.make(server.baseURL, path, headers: [answer, ("Cookie", "fake=x")])
            #expect(wrongCookie.status == 403)
            #expect(wrongCookie.json == .object(["errors": .array([.string("missing cookie set on challenge")])]))
            let rightCookie = try await Exchange.make(
                server.baseURL,
                path,
                headers: [answer, ("Cookie", "fake=fake_value")]
            )
            #expect(rightCookie.status == 200)
        }
    }

    /// Malformed `Authorization` fields get a challenge, never a crash or a 500.
    @Test func answersMalformedAuthorizationWithAChallenge() async throws {
        try await TestServer.withRunningServer { server in
            let fields = [
                "Digest", "Digest ", "Basic YTpi", "Digest username", #"Digest username="unterminated"#,
                #"Digest qop=auth, response="x""#, "Digest ,,,=,=\",", #"Digest qop=weird, response="x""#,
                "Digest response=" + String(repeating: "\\\"a,", count: 2000),
            ]
            for field in fields {
                let answer = try await Exchange.make(
                    server.baseURL,
                    "/digest-auth/auth/u/p",
                    headers: [("Authorization", field)]
                )
                #expect(answer.status == 401, "\(field.prefix(40))")
            }
        }
    }
}
