import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What answers a `401`, with no I/O: nonce counting across a session's requests, where a
/// request's own credential may go, and how stored protection spaces are matched.
@Suite struct ChallengeResponderTests {
    private static func url(_ string: String) throws -> URL { try #require(URL(string: string)) }

    private static func digestChallenge(nonce: String, at url: URL) -> ResponseHead {
        ResponseHead(
            url: url,
            statusCode: 401,
            httpVersion: "HTTP/1.1",
            headerFields: [
                ("WWW-Authenticate", "Digest realm=\"r\", nonce=\"\(nonce)\", qop=\"auth\", algorithm=SHA-256")
            ]
        )
    }

    /// The `nc` an answer carries.
    private static func nonceCount(of answer: ChallengeResponder.Answer?) -> String? {
        guard let value = answer?.next.headers["Authorization"], let range = value.range(of: "nc=") else { return nil }
        return String(value[range.upperBound...].prefix(8))
    }

    @Test func aNonceAnsweredAgainCountsOnAcrossTheSessionsRequests() throws {
        let target = try Self.url("http://example.org/a")
        let counts = Protected(DigestAuthentication.NonceCounter())
        let credential = URLCredential(user: "ada", password: "pw", persistence: .none)
        // Two requests of one session, each with a responder of its own, as each attempt makes.
        let first = ChallengeResponder(credential: (credential, target), storage: nil, nonceCounts: counts)
        let second = ChallengeResponder(credential: (credential, target), storage: nil, nonceCounts: counts)
        let head = RequestHead(method: .get, url: target)
        let challenge = Self.digestChallenge(nonce: "same", at: target)
        #expect(Self.nonceCount(of: try first.answer(to: challenge, for: head)) == "00000001")
        #expect(Self.nonceCount(of: try second.answer(to: challenge, for: head)) == "00000002")
        // A new nonce starts at one; the same nonce from another origin is another count.
        #expect(
            Self.nonceCount(of: try first.answer(to: Self.digestChallenge(nonce: "new", at: target), for: head))
                == "00000001"
        )
        let other = try Self.url("http://example.org:8080/a")
        let elsewhere = ChallengeResponder(credential: (credential, other), storage: nil, nonceCounts: counts)
        #expect(
            Self.nonceCount(
                of: try elsewhere.answer(
                    to: Self.digestChallenge(nonce: "same", at: other),
                    for: RequestHead(method: .get, url: other)
                )
            ) == "00000001"
        )
        #expect(Self.nonceCount(of: try second.answer(to: challenge, for: head)) == "00000003")
    }

    /// Each `WWW-Authenticate` field is read on its own: an unterminated quote in one does not
    /// swallow the Digest challenge of the next (joined with ", " it would).
    @Test func aMalformedChallengeFieldDoesNotHideTheNext() throws {
        let target = try Self.url("http://example.org/a")
        let responder = ChallengeResponder(
            credential: (URLCredential(user: "ada", password: "pw", persistence: .none), target),
            storage: nil,
            nonceCounts: nil
        )
        let response = ResponseHead(
            url: target,
            statusCode: 401,
            httpVersion: "HTTP/1.1",
            headerFields: [
                ("WWW-Authenticate", "Basic realm=\"unterminated"),
                ("WWW-Authenticate", "Digest realm=\"r\", nonce=\"n\", qop=\"auth\""),
            ]
        )
        let answer = try responder.answer(to: response, for: RequestHead(method: .get, url: target))
        #expect(answer?.scheme == "Digest")
    }

    /// A user name with a `:` cannot be sent as Basic (the server splits at the first `:`), but
    /// Digest quotes it: offered both, the request answers Digest; offered Basic alone, it fails
    /// with the reason, not a silent `401`.
    @Test func aUserNameWithAColonIsRefusedForBasicOnly() throws {
        let target = try Self.url("http://example.org/a")
        let responder = ChallengeResponder(
            credential: (URLCredential(user: "a:b", password: "pw", persistence: .none), target),
            storage: nil,
            nonceCounts: nil
        )
        let head = RequestHead(method: .get, url: target)
        func challenge(_ fields: [String]) -> ResponseHead {
            ResponseHead(
                url: target,
                statusCode: 401,
                httpVersion: "HTTP/1.1",
                headerFields: fields.map { ("WWW-Authenticate", $0) }
            )
        }
        let both = challenge(["Basic realm=\"r\"", "Digest realm=\"r\", nonce=\"n\", qop=\"auth\""])
        #expect(try responder.answer(to: both, for: head)?.scheme == "Digest")
        do {
            _ = try responder.answer(to: challenge(["Basic realm=\"r\""]), for: head)
            Issue.record("a Basic answer was made for a user name with a colon")
        } catch {
            #expect(error.credentialEncodingFailureReason == .colonInBasicUserName)
        }
    }

    @Test func theNonceCounterForgetsTheOldestPastItsLimit() {
        var counter = DigestAuthentication.NonceCounter()
        #expect(counter.next(for: "first") == 1)
        #expect(counter.next(for: "first") == 2)
        for index in 0..<DigestAuthentication.NonceCounter.maximumNonces {
            _ = counter.next(for: "nonce \(index)")
        }
        #expect(counter.nonceCount == DigestAuthentication.NonceCounter.maximumNonces)
        #expect(counter.next(for: "first") == 1, "forgotten to make room, so counted afresh")
        // The least recently answered goes first: one in use stays.
        for index in 0..<DigestAuthentication.NonceCounter.maximumNonces {
            _ = counter.next(for: "nonce \(index)")
            #expect(counter.next(for: "first") == index + 2)
        }
    }

    @Test func aRequestsOwnCredentialGoesToItsOriginAndItsHTTPSUpgradeOnly() throws {
        let origin = try Self.url("http://example.org/login")
        func allowed(_ url: String) throws -> Bool {
            ChallengeResponder.mayReceiveOwnCredential(try Self.url(url), origin: origin)
        }
        #expect(try allowed("http://example.org/other"))
        #expect(try allowed("http://EXAMPLE.org:80/other"))
        #expect(try allowed("https://example.org/secure"), "the same host upgraded to https")
        #expect(try allowed("https://example.org:443/secure"))
        #expect(try !allowed("https://example.org:8443/secure"), "another port is another server")
        #expect(try !allowed("https://www.example.org/secure"), "another host")
        #expect(try !allowed("http://example.org:8080/other"))
        let secure = try Self.url("https://example.org/login")
        #expect(
            !ChallengeResponder.mayReceiveOwnCredential(try Self.url("http://example.org/login"), origin: secure),
            "never down from https to http"
        )
        let onPort = try Self.url("http://example.org:8080/login")
        #expect(!ChallengeResponder.mayReceiveOwnCredential(try Self.url("https://example.org/login"), origin: onPort))
    }

    @Test func storedSpacesMatchByMeaningNotSpelling() {
        #expect(ChallengeResponder.scheme(ofProtocol: NSURLProtectionSpaceHTTPS) == "https")
        #expect(ChallengeResponder.scheme(ofProtocol: NSURLProtectionSpaceHTTP) == "http")
        #expect(ChallengeResponder.scheme(ofProtocol: "HTTPS") == "https")
        #expect(ChallengeResponder.scheme(ofProtocol: nil) == nil)
    }
}
