import Foundation
import Testing

@testable import Courier

@Suite struct AuthenticationChallengeTests {
    /// RFC 9110 §11.6.1's example: two challenges in one field, a quoted value with escapes.
    @Test func readsEveryChallengeOfAField() {
        let challenges = AuthenticationChallenge.parse(
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#
        )
        #expect(
            challenges == [
                AuthenticationChallenge(
                    scheme: "Newauth",
                    token68: nil,
                    parameters: ["realm": "apps", "type": "1", "title": #"Login to "apps""#]
                ),
                AuthenticationChallenge(scheme: "Basic", token68: nil, parameters: ["realm": "simple"]),
            ]
        )
    }

    /// RFC 7616 §3.9.1: a server offering SHA-256 and MD5 Digest, in two fields the transport
    /// joined; parameter names case-insensitive, line breaks of the example folded to spaces.
    @Test func readsDigestChallengesAsRFC7616SendsThem() throws {
        let sha256 = """
            Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, \
            nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", \
            opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """
        let md5 = """
            Digest REALM="http-auth@example.org", qop="auth, auth-int", Algorithm=MD5, \
            nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", \
            opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """
        let challenges = AuthenticationChallenge.parse(sha256 + ", " + md5)
        try #require(challenges.count == 2)
        #expect(challenges.allSatisfy { $0.hasScheme("digest") })
        #expect(challenges[0].parameter("algorithm") == "SHA-256")
        #expect(challenges[1].parameter("ALGORITHM") == "MD5")
        #expect(challenges[1].parameter("realm") == "http-auth@example.org")
        #expect(challenges[0].parameter("qop") == "auth, auth-int")
        #expect(challenges[0].parameter("nonce") == "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v")
    }

    /// A lone word after the scheme is a token68 (`Digest realm` too); `x=` with no value is one.
    @Test func readsToken68AndBareSchemes() {
        let challenges = AuthenticationChallenge.parse("Negotiate a87421000492aa874209af8bc028==, Bearer, Basic x=")
        #expect(
            challenges == [
                AuthenticationChallenge(
                    scheme: "Negotiate",
                    token68: "a87421000492aa874209af8bc028==",
                    parameters: [:]
                ),
                AuthenticationChallenge(scheme: "Bearer", token68: nil, parameters: [:]),
                AuthenticationChallenge(scheme: "Basic", token68: "x=", parameters: [:]),
            ]
        )
    }

    /// What cannot be read is skipped up to the next comma; the challenges around it stay.
    @Test(arguments: [
        #"Basic realm="x", "quoted", Bearer realm="y""#,
        #"Basic realm="x", Digest realm=;x, Bearer realm="y""#,
        #"Basic realm="x", Digest realm="a, b" junk, Bearer realm="y""#,
        #"Basic realm="x",,, ;;;, Bearer realm="y""#,
    ])
    func skipsWhatItCannotRead(field: String) {
        let challenges = AuthenticationChallenge.parse(field)
        #expect(challenges.map(\.scheme) == ["Basic", "Bearer"], "\(challenges)")
        #expect(challenges.map { $0.parameter("realm") } == ["x", "y"])
    }

    /// A challenge naming a parameter twice is ambiguous (which realm, which nonce?): dropped.
    @Test func dropsAChallengeThatNamesAParameterTwice() {
        let challenges = AuthenticationChallenge.parse(#"Digest nonce="a", NONCE="b", Basic realm="x""#)
        #expect(challenges.map(\.scheme) == ["Basic"])
    }

    @Test(arguments: ["", " ", ",", "\"", #"Basic realm="never closed"#, "=", "Basic ="])
    func oddFieldsGiveNoChallengeAndNoCrash(field: String) {
        #expect(AuthenticationChallenge.parse(field).allSatisfy { !$0.scheme.isEmpty })
    }

    /// Linear in the field, whatever it holds: inputs built to make a backtracking reader
    /// quadratic take one pass (a quadratic read of these would take minutes).
    @Test(arguments: [
        String(repeating: "a=b, ", count: 100_000),
        String(repeating: ", ", count: 200_000),
        "Basic " + String(repeating: "x", count: 400_000) + " y",
        "Basic realm=\"" + String(repeating: "\\\"", count: 200_000),
        String(repeating: "Basic a, ", count: 50_000),
    ])
    func readsInOnePass(field: String) async throws {
        let (challenges, elapsed) = try await offThePool { AuthenticationChallenge.parse(field) }
        #expect(elapsed < .seconds(30), "took \(elapsed)")
        #expect(challenges.count <= field.utf8.count)
    }
}
