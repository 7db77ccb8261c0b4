import CourierHashes
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

@Suite struct DigestAuthenticationTests {
    /// RFC 7616 §3.9.1's challenge, in one algorithm or the other.
    static func rfc7616Challenge(algorithm: String) -> AuthenticationChallenge {
        AuthenticationChallenge(
            scheme: "Digest",
            token68: nil,
            parameters: [
                "realm": "http-auth@example.org",
                "qop": "auth, auth-int",
                "algorithm": algorithm,
                "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
                "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
            ]
        )
    }

    static func challenge(_ parameters: [String: String], scheme: String = "Digest") -> AuthenticationChallenge {
        AuthenticationChallenge(scheme: scheme, token68: nil, parameters: parameters)
    }

    /// The parameters of an `Authorization` value, read back with the challenge parser (the
    /// grammar is the same), so tests can check one parameter at a time.
    static func parameters(of authorization: String) throws -> [String: String] {
        let parsed = AuthenticationChallenge.parse(authorization)
        try #require(parsed.count == 1 && parsed[0].hasScheme("Digest"))
        return parsed[0].parameters
    }

    // MARK: - The RFCs' examples

    /// RFC 7616 §3.9.1, answered with both algorithms; the field is exactly the RFC's, folded.
    @Test(arguments: [
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
    ])
    func rfc7616Example(algorithm: String, response: String) throws {
        let digest = try DigestAuthentication(Self.rfc7616Challenge(algorithm: algorithm))
        let authorization = try digest.authorization(
            username: "Mufasa",
            password: "Circle of Life",
            method: .get,
            target: "/dir/index.html",
            body: nil,
            nonceCount: 1,
            clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
        )
        #expect(
            authorization
                == """
                Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", \
                algorithm=\(algorithm), nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, \
                cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="\(response)", \
                opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
                """
        )
    }

    /// RFC 7616 §3.9.2: SHA-512-256 with `userhash`. The RFC prints a username hash and response
    /// that its own inputs do not give (erratum 4897, computed with a draft of SHA-512/256);
    /// these are the erratum's values, which FIPS 180-4's SHA-512/256 gives (and Python's
    /// `hashlib` agrees).
    @Test func rfc7616UserhashExample() throws {
        let challenge = Self.challenge([
            "realm": "api@example.org",
            "qop": "auth",
            "algorithm": "SHA-512-256",
            "nonce": "5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK",
            "opaque": "HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS",
            "charset": "UTF-8",
            "userhash": "true",
        ])
        let digest = try DigestAuthentication(challenge)
        #expect(digest.hashesUsername)
        let authorization = try digest.authorization(
            username: "J\u{E4}s\u{F8}n Doe",
            password: "Secret, or not?",
            method: .get,
            target: "/doe.json",
            body: nil,
            nonceCount: 1,
            clientNonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v"
        )
        #expect(
            authorization
                == """
                Digest username="793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b", \
                realm="api@example.org", uri="/doe.json", algorithm=SHA-512-256, \
                nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", nc=00000001, \
                cnonce="NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", qop=auth, \
                response="3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5", \
                opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", userhash=true
                """
        )
    }

    /// Without `userhash`, RFC 7616 §3.9.2's username goes as `username*` (RFC 8187), exactly as
    /// the RFC spells it, and the response does not change.
    @Test func aNonASCIIUsernameGoesAsAnExtendedValue() throws {
        let digest = try DigestAuthentication(
            Self.challenge([
                "realm": "api@example.org", "qop": "auth", "algorithm": "SHA-512-256",
                "nonce": "5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK",
            ])
        )
        let authorization = try digest.authorization(
            username: "J\u{E4}s\u{F8}n Doe",
            password: "Secret, or not?",
            method: .get,
            target: "/doe.json",
            body: nil,
            nonceCount: 1,
            clientNonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v"
        )
        #expect(authorization.hasPrefix(#"Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm="api@example.org""#))
        let parameters = try Self.parameters(of: authorization)
        #expect(parameters["response"] == "3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5")
        #expect(parameters["username"] == nil && parameters["userhash"] == nil)
    }

    /// RFC 2617 §3.5: MD5 named by no `algorithm` (so the answer names none either).
    @Test func rfc2617Example() throws {
        let digest = try DigestAuthentication(
            Self.challenge([
                "realm": "testrealm@host.com", "qop": "auth,auth-int",
                "nonce": "dcd98b7102dd2f0e8b11d0f600bfb0c093", "opaque": "5ccc069c403ebaf9f0171e9517f40e41",
            ])
        )
        #expect(digest.algorithm == .md5 && !digest.namesAlgorithm)
        let authorization = try digest.authorization(
            username: "Mufasa",
            password: "Circle Of Life",
            method: .get,
            target: "/dir/index.html",
            body: nil,
            nonceCount: 1,
            clientNonce: "0a4f113b"
        )
        #expect(
            authorization
                == """
                Digest username="Mufasa", realm="testrealm@host.com", uri="/dir/index.html", \
                nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", nc=00000001, cnonce="0a4f113b", qop=auth, \
                response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41"
                """
        )
    }

    // MARK: - The hashing forms

    /// The formulas of RFC 7616 §3.4, written out with the hashes directly, for every algorithm
    /// in its plain and `-sess` forms, with `auth`, `auth-int` and no `qop`.
    @Test(arguments: DigestAuthentication.Algorithm.allCases, [false, true])
    func everyFormMatchesTheRFCsFormulas(algorithm: DigestAuthentication.Algorithm, session: Bool) throws {
        let hash: ([UInt8]) -> String = { algorithm.hexDigest($0) }
        func text(_ value: String) -> String { hash(Array(value.utf8)) }
        let body = Data("{\"name\": \"Ada\"}".utf8)
        let (user, realm, password, nonce, cnonce) = ("ada", "r@example", "pw", "n0nce", "c1ient")
        var firstHash = text("\(user):\(realm):\(password)")
        if session { firstHash = text("\(firstHash):\(nonce):\(cnonce)") }

        for qop in ["auth", "auth-int", nil] {
            var parameters = ["realm": realm, "nonce": nonce, "algorithm": algorithm.name + (session ? "-sess" : "")]
            parameters["qop"] = qop
            let digest = try DigestAuthentication(Self.challenge(parameters))
            let authorization = try digest.authorization(
                username: user,
                password: password,
                method: .post,
                target: "/submit?x=1",
                body: body,
                nonceCount: 7,
                clientNonce: cnonce
            )
            let sent = try Self.parameters(of: authorization)
            let expected: String
            switch qop {
            case "auth":
                expected = text("\(firstHash):\(nonce):00000007:\(cnonce):auth:\(text("POST:/submit?x=1"))")
            case "auth-int":
                let second = text("POST:/submit?x=1:\(hash(Array(body)))")
                expected = text("\(firstHash):\(nonce):00000007:\(cnonce):auth-int:\(second)")
            default:
                expected = text("\(firstHash):\(nonce):\(text("POST:/submit?x=1"))")
            }
            let label = "\(algorithm.name) session \(session) qop \(qop ?? "none")"
            #expect(sent["response"] == expected, "\(label)")
            #expect(sent["algorithm"] == algorithm.name + (session ? "-sess" : ""), "\(label)")
            #expect(sent["qop"] == qop, "\(label)")
            #expect(sent["nc"] == (qop == nil ? nil : "00000007"), "\(label)")
            #expect(sent["cnonce"] == (qop == nil && !session ? nil : cnonce), "\(label)")
            #expect(sent["response"]?.count == algorithm.hexDigest([UInt8]()).count, "\(label)")
        }
    }

    /// `auth` is chosen over `auth-int` whatever the order; `auth-int` alone needs the body.
    @Test func chosesAuthOverAuthIntAndAuthIntOnlyWithTheBody() throws {
        let both = try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n", "qop": "auth-int, auth"]))
        #expect(try both.qualityOfProtection(bodyAvailable: true) == .authentication)
        let integrityOnly = try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n", "qop": "auth-int"]))
        #expect(try integrityOnly.qualityOfProtection(bodyAvailable: true) == .integrity)
        #expect(throws: DigestAuthentication.Failure.bodyRequired) {
            try integrityOnly.qualityOfProtection(bodyAvailable: false)
        }
        #expect(throws: DigestAuthentication.Failure.bodyRequired) {
            try integrityOnly.authorization(
                username: "u",
                password: "p",
                method: .put,
                target: "/",
                body: nil,
                nonceCount: 1,
                clientNonce: "c"
            )
        }
        // An empty body is a body: its hash is that of no bytes.
        let empty = try Self.parameters(
            of: integrityOnly.authorization(
                username: "u",
                password: "p",
                method: .put,
                target: "/",
                body: Data(),
                nonceCount: 1,
                clientNonce: "c"
            )
        )
        #expect(empty["qop"] == "auth-int")
        let none = try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n"]))
        #expect(try none.qualityOfProtection(bodyAvailable: false) == nil)
    }

    /// Algorithm names are case-insensitive; the answer spells them as the registry does.
    @Test func readsAlgorithmNamesCaseInsensitively() throws {
        let cases: [(String, DigestAuthentication.Algorithm, Bool)] = [
            ("md5", .md5, false), ("MD5-SESS", .md5, true), ("sha-256", .sha256, false),
            ("Sha-256-Sess", .sha256, true), ("SHA-512-256", .sha512_256, false),
            ("sha-512-256-sess", .sha512_256, true), ("SHA-512", .sha512, false),
        ]
        for (token, algorithm, session) in cases {
            let digest = try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n", "algorithm": token]))
            #expect(digest.algorithm == algorithm && digest.isSessionAlgorithm == session, "\(token)")
        }
        for unsupported in ["SHA-1", "-sess", "SHA-256-sessX", "MD5 ", "", "SHA-512-256-sess-sess"] {
            #expect(throws: DigestAuthentication.Failure.unsupportedAlgorithm, "\(unsupported)") {
                try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n", "algorithm": unsupported]))
            }
        }
    }

    // MARK: - Nonces

    @Test func countsEachNonceFromOne() {
        var counter = DigestAuthentication.NonceCounter()
        #expect(counter.next(for: "a") == 1)
        #expect(counter.next(for: "a") == 2)
        #expect(counter.next(for: "a") == 3)
        #expect(counter.next(for: "b") == 1, "a new nonce starts again")
        #expect(counter.next(for: "b") == 2)
        #expect(counter.next(for: "a") == 4, "a nonce seen before counts on: the server may still take it")
    }

    /// `nc` is eight hexadecimal digits, and successive counts change the response.
    @Test func sendsTheCountAsEightHexadecimalDigits() throws {
        let digest = try DigestAuthentication(Self.rfc7616Challenge(algorithm: "SHA-256"))
        var counter = DigestAuthentication.NonceCounter()
        var responses: Set<String> = []
        for expected in ["00000001", "00000002", "00000003"] {
            let sent = try Self.parameters(
                of: digest.authorization(
                    username: "Mufasa",
                    password: "Circle of Life",
                    method: .get,
                    target: "/",
                    body: nil,
                    nonceCount: counter.next(for: digest.nonce),
                    clientNonce: "fixed"
                )
            )
            #expect(sent["nc"] == expected)
            responses.insert(sent["response"] ?? "")
        }
        #expect(responses.count == 3)
        let large = try Self.parameters(
            of: digest.authorization(
                username: "u",
                password: "p",
                method: .get,
                target: "/",
                body: nil,
                nonceCount: 0x1_0abc,
                clientNonce: "c"
            )
        )
        #expect(large["nc"] == "00010abc")
    }

    /// Client nonces come from the generator given: fixed by a seeded one, fresh from the system's.
    @Test func makesClientNoncesFromTheGeneratorGiven() {
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        let nonce = DigestAuthentication.makeClientNonce(using: &first)
        #expect(nonce == DigestAuthentication.makeClientNonce(using: &second))
        #expect(nonce.count == 32 && nonce.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
        #expect(DigestAuthentication.makeClientNonce(using: &first) != nonce)
        #expect(DigestAuthentication.makeClientNonce() != DigestAuthentication.makeClientNonce())
    }

    /// `stale=true` (any case) is read; anything else is not stale.
    @Test func readsStale() throws {
        for (value, stale) in [("true", true), ("TRUE", true), ("True", true), ("false", false), ("yes", false)] {
            let digest = try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n", "stale": value]))
            #expect(digest.isStale == stale, "\(value)")
        }
        #expect(try !DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n"])).isStale)
    }

    // MARK: - Quoting and usernames

    /// `"` and `\` in quoted values are escaped, and read back as they were.
    @Test func escapesQuotedStrings() throws {
        let digest = try DigestAuthentication(
            Self.challenge(["realm": #"the "best" \realm"#, "nonce": #"n"o\n"#, "opaque": #"o""#])
        )
        let authorization = try digest.authorization(
            username: #"a "quoted" \user"#,
            password: "p",
            method: .get,
            target: "/",
            body: nil,
            nonceCount: 1,
            clientNonce: "c"
        )
        #expect(authorization.contains(#"username="a \"quoted\" \\user""#))
        #expect(authorization.contains(#"realm="the \"best\" \\realm""#))
        let sent = try Self.parameters(of: authorization)
        #expect(sent["username"] == #"a "quoted" \user"#)
        #expect(sent["realm"] == #"the "best" \realm"#)
        #expect(sent["nonce"] == #"n"o\n"#)
        #expect(sent["opaque"] == #"o""#)
    }

    /// A username with control characters cannot be quoted; it goes percent-encoded.
    @Test func aUsernameWithControlCharactersGoesAsAnExtendedValue() throws {
        let digest = try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n"]))
        let authorization = try digest.authorization(
            username: "a\r\nb'c",
            password: "p",
            method: .get,
            target: "/",
            body: nil,
            nonceCount: 1,
            clientNonce: "c"
        )
        #expect(authorization.hasPrefix("Digest username*=UTF-8''a%0D%0Ab%27c, "))
        #expect(!authorization.contains("\r") && !authorization.contains("\n"))
    }

    /// The password is in no answer, and neither it nor the nonce in any failure's description.
    @Test func neverShowsThePassword() throws {
        let digest = try DigestAuthentication(Self.rfc7616Challenge(algorithm: "MD5"))
        let authorization = try digest.authorization(
            username: "Mufasa",
            password: "Circle of Life",
            method: .get,
            target: "/",
            body: nil,
            nonceCount: 1,
            clientNonce: "c"
        )
        #expect(!authorization.contains("Circle"))
        #expect(!String(describing: digest).contains("Circle"))
        let failures: [DigestAuthentication.Failure] = [
            .notDigest, .missingRealm, .missingNonce, .unsupportedAlgorithm, .unsupportedQualityOfProtection,
            .oversizedParameter, .invalidCharacters, .bodyRequired,
        ]
        #expect(Set(failures.map(\.description)).count == failures.count)
        #expect(failures.allSatisfy { $0.description.allSatisfy { $0.isLetter } })
    }

    // MARK: - Unusable and hostile challenges

    @Test func aChallengeWithoutRealmOrNonceIsUnusable() {
        #expect(throws: DigestAuthentication.Failure.missingRealm) {
            try DigestAuthentication(Self.challenge(["nonce": "n"]))
        }
        #expect(throws: DigestAuthentication.Failure.missingNonce) {
            try DigestAuthentication(Self.challenge(["realm": "r"]))
        }
        #expect(throws: DigestAuthentication.Failure.missingNonce) {
            try DigestAuthentication(Self.challenge(["realm": "r", "nonce": ""]))
        }
        #expect(throws: DigestAuthentication.Failure.notDigest) {
            try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n"], scheme: "Basic"))
        }
        #expect(throws: DigestAuthentication.Failure.unsupportedQualityOfProtection) {
            try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n", "qop": "auth-conf, , x"]))
        }
        // A realm may be empty: it is still a realm.
        #expect(throws: Never.self) { try DigestAuthentication(Self.challenge(["realm": "", "nonce": "n"])) }
    }

    /// Values the answer would echo must fit a quoted string and stay short.
    @Test func refusesValuesItCouldNotEchoSafely() throws {
        let long = String(repeating: "n", count: DigestAuthentication.maximumParameterLength + 1)
        for name in ["realm", "nonce", "opaque"] {
            var parameters = ["realm": "r", "nonce": "n"]
            parameters[name] = long
            #expect(throws: DigestAuthentication.Failure.oversizedParameter, "\(name)") {
                try DigestAuthentication(Self.challenge(parameters))
            }
            for control in ["\r\nX-Injected: 1", "\u{0}", "\u{7F}"] {
                parameters[name] = "a" + control
                #expect(throws: DigestAuthentication.Failure.invalidCharacters, "\(name)") {
                    try DigestAuthentication(Self.challenge(parameters))
                }
            }
        }
        let digest = try DigestAuthentication(Self.challenge(["realm": "r", "nonce": "n"]))
        #expect(throws: DigestAuthentication.Failure.invalidCharacters) {
            try digest.authorization(
                username: "u",
                password: "p",
                method: .get,
                target: "/a\nb",
                body: nil,
                nonceCount: 1,
                clientNonce: "c"
            )
        }
    }

    /// Challenges parsed from odd fields either read or are refused; none crashes, and a huge
    /// one is handled in time linear in its size.
    @Test func oddFieldsNeverCrash() async {
        await cpuBound {
            let huge = String(repeating: "x", count: 1_000_000)
            let fields = [
                "Digest", "Digest realm", "Digest realm=, nonce=", #"Digest realm="", nonce="""#,
                #"Digest realm="r", nonce="n", qop="#, #"Digest realm="r", nonce="n", algorithm="#,
                #"Digest realm="r", nonce="n", qop=",,,,,""#, "Digest realm=r, nonce=n, stale=\(huge)",
                #"Digest realm="\#(huge)", nonce="n""#, #"Digest realm="r", nonce="\#(huge)", qop=auth"#,
                "Digest realm=r, nonce=n, qop=\"" + String(repeating: "auth,", count: 100_000) + "\"",
                "Digest realm=r, nonce=n, algorithm=" + String(repeating: "-sess", count: 100_000),
            ]
            for field in fields {
                for challenge in AuthenticationChallenge.parse(field) {
                    guard let digest = try? DigestAuthentication(challenge) else { continue }
                    let authorization = try? digest.authorization(
                        username: huge,
                        password: huge,
                        method: .get,
                        target: "/",
                        body: Data(huge.utf8),
                        nonceCount: Int.max,
                        clientNonce: "c"
                    )
                    #expect(authorization.map { $0.hasPrefix("Digest ") } ?? true)
                }
            }
        }
    }
}
