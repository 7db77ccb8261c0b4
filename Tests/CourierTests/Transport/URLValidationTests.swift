import CourierTestSupport
import Foundation
import Testing

@testable @_spi(CourierTransport) import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct URLValidationTests {
    @Test(arguments: [
        "http://127.0.0.1/", "https://example.org:443/a?b#c", "http://[::1]:8080/", "http://h:0/",
        "http://h:65535", "HTTP://H/", "http://u:p@h:80/", "http://h:/x", "http://h:08080/",
    ])
    func acceptsWhatCanBeSent(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(URLValidation.problem(with: url) == nil)
    }

    @Test(arguments: [
        ("http://127.0.0.1:65536/", "port"), ("http://[::1]:70000/", "port"),
        ("http://h:99999999999999999999/", "port"), ("ftp://h/", "scheme"),
        ("file:///etc/passwd", "scheme"), ("http:///x", "host"), ("http://:80/", "host"), ("http://[]/", "host"),
    ])
    func refusesWhatATransportCouldTrapOnOrMisroute(text: String, word: String) throws {
        let url = try #require(URL(string: text))
        let error = try #require(URLValidation.problem(with: url))
        #expect(error.kind == .invalidURL)
        #expect(error.invalidURLReason?.contains(word) == true, "\(error)")
    }

    /// Texts `URL` itself refuses, checked as text (a transport could be handed one some other way).
    /// Hosts that read fine as text but decode to what AsyncHTTPClient traps on (an empty host
    /// once it strips brackets).
    @Test(arguments: ["http://%5B%5D/", "http://%5B/", "http://%5d:80/", "http://a%00b/"])
    func refusesHostsThatDecodeBadly(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(URLValidation.problem(with: url)?.kind == .invalidURL)
    }

    /// A plain host (letters, digits, `-._~`) skips reading the decoded host and port; on any
    /// other the decoded check still runs. The verdict is the same as checking both every time,
    /// over authorities made of the bytes that matter (a fixed seed: the same inputs every run).
    @Test func skippingTheDecodedCheckForPlainHostsChangesNoVerdict() async throws {
        // Off the shared pool: 20,000 URLs take a second or more, which would hold back other
        // tests' continuations there.
        let (outcome, _) = try await offThePool { () -> (compared: Int, differing: [String]) in
            let alphabet = Array("aZ09-._~%5BbD:@[]!$&'()*+,;= ".utf8)
            var random = SplitMix64(seed: 14)
            var compared = 0
            var differing: [String] = []
            for _ in 0..<20_000 {
                var authority: [UInt8] = []
                for _ in 0..<Int.random(in: 1...12, using: &random) {
                    authority.append(alphabet[Int.random(in: 0..<alphabet.count, using: &random)])
                }
                guard let url = URL(string: "http://" + String(decoding: authority, as: UTF8.self) + "/p")
                else { continue }
                let text = url.absoluteString
                let both = URLValidation.reason(rejecting: text) ?? URLValidation.reason(rejectingDecodedPartsOf: url)
                if URLValidation.reason(rejecting: url, text: text) != both { differing.append(text) }
                compared += 1
            }
            return (compared, differing)
        }
        #expect(outcome.differing == [])
        #expect(outcome.compared > 1_000)
    }

    @Test(arguments: [("http://h:12a/", "port"), ("http://[::1/", "]"), ("http://[::1]x/", "port")])
    func refusesMalformedAuthorities(text: String, word: String) {
        #expect(URLValidation.reason(rejecting: text)?.contains(word) == true)
    }

    @Test func theReasonIsLinearInTheURL() async throws {
        // A 400,000-character authority is checked in one pass (a quadratic scan would take minutes).
        let text = "http://" + String(repeating: "a:", count: 200_000) + "1/"
        let (_, elapsed) = try await offThePool { URLValidation.reason(rejecting: text) }
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test func userInfoNeverReachesTheError() throws {
        let url = try #require(URL(string: "http://alice:s3cret@127.0.0.1:70000/path"))
        let error = try #require(URLValidation.problem(with: url))
        #expect(!"\(error)".contains("s3cret"))
        #expect(error.invalidURLString == "http://127.0.0.1:70000/path")
    }

    @Test(arguments: [
        ("http://u:p@h/x", "http://h/x"), ("http://h/x@y", "http://h/x@y"), ("http://a@b@h:1/", "http://h:1/"),
        ("no scheme", "no scheme"), ("http://h?q=a@b", "http://h?q=a@b"),
        ("https://u:p#ss@h/ x", "https://h/ x"), ("http://u:p\u{301}@h/ x", "http://h/ x"),
    ])
    func redactionRemovesOnlyTheUserInfo(text: String, expected: String) {
        #expect(URLRedaction.removingUserInfo(from: text) == expected)
    }
}

@Suite struct RedirectPolicyTests {
    private let origin = URL(string: "http://127.0.0.1:8080/start") ?? URL(fileURLWithPath: "/")

    private func followed(_ decision: RedirectPolicy.Decision) -> RedirectPolicy.Hop? {
        if case .follow(let hop) = decision { return hop }
        return nil
    }

    @Test(arguments: [
        (301, "POST", "GET", true), (302, "POST", "GET", true), (303, "POST", "GET", true), (303, "PUT", "GET", true),
        (303, "HEAD", "HEAD", false), (301, "PUT", "PUT", false), (302, "GET", "GET", false),
        (307, "POST", "POST", false), (308, "PATCH", "PATCH", false),
    ])
    func theMethodTable(status: Int, method: String, next: String, dropsBody: Bool) throws {
        let hop = try #require(
            followed(RedirectPolicy.nextHop(status: status, location: "/next", method: method, from: origin))
        )
        #expect(hop.method == next)
        #expect(hop.dropsBody == dropsBody)
        #expect(hop.url.absoluteString == "http://127.0.0.1:8080/next")
        #expect(!hop.leavesOrigin)
    }

    /// RFC 9110 §10.2.2: a `Location` without a fragment inherits the request's; one with its
    /// own keeps it.
    @Test(arguments: [
        ("/next", "http://127.0.0.1:8080/next#part%20two"),
        ("/next#own", "http://127.0.0.1:8080/next#own"),
        ("http://u:p@example.org/x", "http://example.org/x#part%20two"),
        ("//example.org/x?q=1", "http://example.org/x?q=1#part%20two"),
        ("/next#%zz", "http://127.0.0.1:8080/next#%25zz"),
    ])
    func aLocationWithoutAFragmentKeepsTheRequests(location: String, expected: String) throws {
        let from = try #require(URL(string: "http://127.0.0.1:8080/start#part%20two"))
        let hop = try #require(
            followed(RedirectPolicy.nextHop(status: 302, location: location, method: "GET", from: from))
        )
        #expect(hop.url.absoluteString == expected)
        let plain = try #require(
            followed(RedirectPolicy.nextHop(status: 302, location: location, method: "GET", from: origin))
        )
        #expect(plain.url.fragment == URL(string: location, relativeTo: origin)?.fragment, "no fragment to inherit")
        // A fragment a server gave earlier, however odd, is carried on (or dropped), never a trap.
        for odd in ["http://h/a#%zz", "http://h/a#a#b", "http://h/a#%", "http://h/a#[x]"] {
            guard let url = URL(string: odd) else { continue }
            _ = RedirectPolicy.nextHop(status: 302, location: "/c", method: "GET", from: url)
        }
    }

    @Test(
        arguments: [
            (200, "/x"), (304, "/x"), (300, "/x"), (302, nil), (302, ""), (302, "mailto:a@b"), (302, "ftp://h/"),
        ] as [(Int, String?)]
    )
    func deliversWhatIsNotARedirectToFollow(status: Int, location: String?) {
        guard case .deliver = RedirectPolicy.nextHop(status: status, location: location, method: "GET", from: origin)
        else {
            Issue.record("expected the response to be delivered")
            return
        }
    }

    @Test(arguments: ["http://127.0.0.1:65536/", "http://[::1]:70000/", "//127.0.0.1:99999999999999999999/"])
    func refusesALocationATransportWouldTrapOn(location: String) {
        guard
            case .fail(let error) = RedirectPolicy.nextHop(status: 302, location: location, method: "GET", from: origin)
        else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.kind == .invalidURL)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/a", false), ("http://127.0.0.1:8081/a", true), ("https://127.0.0.1:8080/a", true),
        ("http://localhost:8080/a", true),
    ])
    func leavingTheOriginIsSchemeHostAndPort(location: String, leaves: Bool) throws {
        let hop = try #require(
            followed(RedirectPolicy.nextHop(status: 302, location: location, method: "GET", from: origin))
        )
        #expect(hop.leavesOrigin == leaves)
    }
}

@Suite struct ResponseFramingTests {
    @Test(arguments: [
        ["Content-Length": "5"], ["Transfer-Encoding": "chunked"], [:],
        ["Content-Length": "0"],
    ])
    func acceptsConsistentFraming(headers: [String: String]) {
        #expect(ResponseFraming.problem(in: headers) == nil)
    }

    @Test(arguments: [
        ["Content-Length": "5, 6"], ["Content-Length": "5", "Transfer-Encoding": "chunked"],
        ["Content-Length": "-1"], ["Content-Length": "five"], ["Content-Length": "5,"], ["content-length": "5, 5"],
    ])
    func refusesConflictingFraming(headers: [String: String]) {
        #expect(ResponseFraming.problem(in: headers) != nil)
    }

    /// The check on an `HTTPURLResponse` (what URLSession gives) looks the two names up rather
    /// than reading every field, with the same verdicts.
    @Test(arguments: [
        (["Content-Length": "5"], true), (["transfer-encoding": "chunked"], true), ([:], true),
        (["content-length": "5, 6"], false), (["Content-Length": "5", "transfer-encoding": "chunked"], false),
        (["Content-Length": " 7 "], true), (["Content-Length": "7\u{A0}"], false),
    ])
    func checksAnHTTPURLResponseAlike(headers: [String: String], isAccepted: Bool) throws {
        let url = try #require(URL(string: "http://127.0.0.1/"))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: headers))
        #expect((ResponseFraming.problem(in: response) == nil) == isAccepted)
        #expect((ResponseFraming.problem(in: headers) == nil) == isAccepted)
    }
}
