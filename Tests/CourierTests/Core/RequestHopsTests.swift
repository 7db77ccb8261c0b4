import Foundation
import Testing

@testable import Courier

/// The redirect machine of one attempt, with no I/O: every event in every phase.
@Suite struct RequestHopsTests {
    typealias Hops = Request.Hops

    private static let metrics = RequestMetrics(startDate: Date(), endDate: Date())
    private static let completion = Hops.Completion(error: nil, metrics: metrics)

    private static func hops(
        _ method: HTTPMethod = .get,
        _ url: String = "http://example.org/a",
        headers: HTTPHeaders = [:],
        limit: Int = 16,
        allowsInsecure: Bool = false,
        asks: Bool? = true
    ) throws -> Hops {
        let head = RequestHead(method: method, url: try #require(URL(string: url)), headers: headers)
        return Hops(
            head: head,
            rules: Hops.Rules(limit: limit, allowsInsecureRedirects: allowsInsecure, followsWithoutAsking: asks)
        )
    }

    private static let origin = URL(fileURLWithPath: "/").deletingLastPathComponent()

    private static func response(_ status: Int, location: String? = nil) -> ResponseHead {
        ResponseHead(
            url: URL(string: "http://example.org/a") ?? origin,
            statusCode: status,
            httpVersion: "HTTP/1.1",
            headerFields: location.map { [("Location", $0)] } ?? []
        )
    }

    /// The redirect a completion or decision started, or `nil` for any other action.
    private static func started(_ action: Hops.NextAction) -> Redirect? {
        if case .startNextExchange(_, let redirect, _) = action { return redirect }
        return nil
    }

    /// The error an action fails the attempt with, or `nil` for any other action.
    private static func failure(_ action: Hops.NextAction) -> CourierError? {
        if case .fail(let error, _) = action { return error }
        return nil
    }

    @Test func aResponseThatIsNoRedirectGoesStraightThrough() throws {
        var hops = try Self.hops()
        guard case .forward = hops.receive(Self.response(200), bodyIsReplayable: true) else {
            Issue.record("a 200 is the response")
            return
        }
        guard case .forward = hops.receive(Data("x".utf8)) else {
            Issue.record("its body goes to the request")
            return
        }
        guard case .forward = hops.complete(Self.completion) else {
            Issue.record("its completion goes to the request")
            return
        }
        // A 304, a 300 and a 302 without Location are responses too.
        for response in [Self.response(304, location: "/b"), Self.response(300, location: "/b"), Self.response(302)] {
            var other = try Self.hops()
            guard case .forward = other.receive(response, bodyIsReplayable: true) else {
                Issue.record("\(response.statusCode) is the response")
                return
            }
        }
    }

    @Test func aRedirectFollowedWithoutAskingDropsItsBodyAndStartsTheNextHopAtItsEnd() throws {
        var hops = try Self.hops()
        guard case .none = hops.receive(Self.response(302, location: "/b?q=1"), bodyIsReplayable: true) else {
            Issue.record("followed without asking")
            return
        }
        guard case .drop = hops.receive(Data(count: 100)) else {
            Issue.record("the redirect's body is dropped")
            return
        }
        let redirect = try #require(Self.started(hops.complete(Self.completion)))
        #expect(redirect.request.url.absoluteString == "http://example.org/a")
        #expect(redirect.nextRequest.url.absoluteString == "http://example.org/b?q=1")
        #expect(redirect.response.statusCode == 302)
        #expect(hops.count == 1)
        #expect(hops.current.url.absoluteString == "http://example.org/b?q=1")
        guard case .forward = hops.receive(Data("y".utf8)) else {
            Issue.record("the next hop's events go to the request")
            return
        }
    }

    @Test func aLongRedirectBodyIsCutOffOnceThenTheRedirectIsFollowed() throws {
        var hops = try Self.hops()
        _ = hops.receive(Self.response(301, location: "/b"), bodyIsReplayable: true)
        guard case .drop = hops.receive(Data(count: Hops.maximumDroppedBytes)) else {
            Issue.record("up to the limit, dropped")
            return
        }
        guard case .cancelTask = hops.receive(Data(count: 1)) else {
            Issue.record("past it, the exchange stops")
            return
        }
        guard case .drop = hops.receive(Data(count: 1)) else {
            Issue.record("stopped once")
            return
        }
        // The cancelled exchange's completion still leads on.
        let cancelled = Hops.Completion(error: URLError(.cancelled), metrics: Self.metrics)
        #expect(Self.started(hops.complete(cancelled))?.nextRequest.url.path == "/b")
    }

    @Test func aDeclinedRedirectIsReplayedWithEverythingKept() throws {
        var hops = try Self.hops(asks: nil)
        guard case .ask(let proposed) = hops.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        else {
            Issue.record("the handler is asked")
            return
        }
        #expect(proposed.url.path == "/b")
        _ = hops.receive(Data("one".utf8))
        guard case .replay(let head, let kept) = hops.decided(.success(nil)) else {
            Issue.record("declined: replay")
            return
        }
        #expect(head.statusCode == 302)
        #expect(kept.pieces == [Data("one".utf8)])
        #expect(kept.completion == nil)
        // What arrives during the replay waits for the next round.
        guard case .drop = hops.receive(Data("two".utf8)) else {
            Issue.record("kept during the replay")
            return
        }
        guard case .none = hops.complete(Self.completion) else {
            Issue.record("the completion is kept during the replay")
            return
        }
        guard case .replay(let second) = hops.replayed() else {
            Issue.record("a second round")
            return
        }
        #expect(second.pieces == [Data("two".utf8)])
        #expect(second.completion != nil)
        guard case .done(releasesHold: false) = hops.replayed() else {
            Issue.record("nothing left")
            return
        }
        guard case .forward = hops.receive(Data("three".utf8)) else {
            Issue.record("straight through after the replay")
            return
        }
    }

    @Test func aDecisionAfterTheExchangeEndedStartsTheNextHopAtOnce() throws {
        var hops = try Self.hops(asks: nil)
        guard case .ask(let proposed) = hops.receive(Self.response(307, location: "/b"), bodyIsReplayable: true)
        else {
            Issue.record("asked")
            return
        }
        guard case .none = hops.complete(Self.completion) else {
            Issue.record("kept while deciding")
            return
        }
        #expect(Self.started(hops.decided(.success(proposed)))?.nextRequest.url.path == "/b")
    }

    @Test func aDecisionBeforeTheExchangeEndedWaitsForItsEnd() throws {
        var hops = try Self.hops(asks: nil)
        _ = hops.receive(Self.response(307, location: "/b"), bodyIsReplayable: true)
        let next = RequestHead(method: .get, url: try #require(URL(string: "http://example.org/c")))
        guard case .none = hops.decided(.success(next)) else {
            Issue.record("waits for the exchange")
            return
        }
        #expect(Self.started(hops.complete(Self.completion))?.nextRequest.url.path == "/c")
    }

    @Test func aHandlersRequestThatCannotBeSentFailsTheAttempt() throws {
        var early = try Self.hops(asks: nil)
        _ = early.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        let problem = CourierError.invalidURL("http://example.org:99999/", reason: "its port is above 65535")
        guard case .cancelTask = early.decided(.failure(problem)) else {
            Issue.record("the exchange is stopped")
            return
        }
        #expect(Self.failure(early.complete(Self.completion))?.kind == .invalidURL)

        var late = try Self.hops(asks: nil)
        _ = late.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        _ = late.complete(Self.completion)
        #expect(Self.failure(late.decided(.failure(problem)))?.kind == .invalidURL)
    }

    @Test func aRedirectBodyTooLongToKeepFailsADeclineButNotAFollow() throws {
        var declined = try Self.hops(asks: nil)
        _ = declined.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        guard case .cancelTask = declined.receive(Data(count: Hops.maximumKeptBytes + 1)) else {
            Issue.record("too much to keep: the exchange stops")
            return
        }
        guard case .none = declined.decided(.success(nil)) else {
            Issue.record("the exchange was stopped already")
            return
        }
        #expect(Self.failure(declined.complete(Self.completion))?.kind == .bufferLimitExceeded)

        var followed = try Self.hops(asks: nil)
        guard case .ask(let proposed) = followed.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        else {
            Issue.record("asked")
            return
        }
        _ = followed.receive(Data(count: Hops.maximumKeptBytes + 1))
        guard case .none = followed.decided(.success(proposed)) else {
            Issue.record("waits for the stopped exchange's end")
            return
        }
        #expect(Self.started(followed.complete(Self.completion)) != nil)
    }

    @Test func pastTheLimitTheAttemptFails() throws {
        var hops = try Self.hops(limit: 1)
        _ = hops.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        #expect(Self.started(hops.complete(Self.completion)) != nil)
        guard case .cancelTask = hops.receive(Self.response(302, location: "/c"), bodyIsReplayable: true) else {
            Issue.record("the second redirect is refused")
            return
        }
        guard case .drop = hops.receive(Data("x".utf8)) else {
            Issue.record("its body is dropped")
            return
        }
        let error = try #require(Self.failure(hops.complete(Self.completion)))
        #expect(error.redirectFailureReason == .tooManyRedirects(limit: 1))
        #expect(error.urlError?.code == .httpTooManyRedirects)
    }

    @Test func aDowngradeToHTTPIsRefusedUnlessAllowed() throws {
        var refused = try Self.hops(.get, "https://example.org/a")
        guard
            case .cancelTask = refused.receive(
                Self.response(302, location: "http://example.org/b"),
                bodyIsReplayable: true
            )
        else {
            Issue.record("refused")
            return
        }
        let error = try #require(Self.failure(refused.complete(Self.completion)))
        #expect(error.redirectFailureReason == .insecureRedirect(url: "http://example.org/b"))

        var allowed = try Self.hops(.get, "https://example.org/a", allowsInsecure: true)
        guard case .none = allowed.receive(Self.response(302, location: "http://example.org/b"), bodyIsReplayable: true)
        else {
            Issue.record("followed when allowed")
            return
        }
    }

    @Test func theSameRequestAgainIsALoopButAnotherMethodOrCookieIsNot() throws {
        var loop = try Self.hops(.get, "http://EXAMPLE.org:80/a#top")
        guard
            case .cancelTask = loop.receive(
                Self.response(302, location: "http://example.org/a"),
                bodyIsReplayable: true
            )
        else {
            Issue.record("a loop")
            return
        }
        // The Location has no fragment, so the next request keeps the first's (RFC 9110 §10.2.2).
        #expect(
            Self.failure(loop.complete(Self.completion))?.redirectFailureReason
                == .loop(url: "http://example.org/a#top")
        )

        // A POST answered 303 to itself becomes a GET: another request.
        var seeOther = try Self.hops(.post, "http://example.org/a")
        guard case .none = seeOther.receive(Self.response(303, location: "/a"), bodyIsReplayable: true) else {
            Issue.record("not a loop")
            return
        }
        // A trailing slash, or an escaped slash, makes another resource.
        var slash = try Self.hops(.get, "http://example.org/docs")
        guard case .none = slash.receive(Self.response(301, location: "/docs/"), bodyIsReplayable: true) else {
            Issue.record("/docs → /docs/ is not a loop")
            return
        }
        var escaped = try Self.hops(.get, "http://example.org/a/b")
        guard case .none = escaped.receive(Self.response(302, location: "/a%2Fb"), bodyIsReplayable: true) else {
            Issue.record("/a/b → /a%2Fb is not a loop")
            return
        }
        // Nor is a redirect that sets a cookie on its way back to the same URL (a login).
        var login = try Self.hops(.get, "http://example.org/a")
        let setsCookie = ResponseHead(
            url: URL(string: "http://example.org/a") ?? Self.origin,
            statusCode: 302,
            httpVersion: "HTTP/1.1",
            headerFields: [("Location", "/a"), ("Set-Cookie", "session=1")]
        )
        guard case .none = login.receive(setsCookie, bodyIsReplayable: true, redirectCookie: .stored("session=1"))
        else {
            Issue.record("a redirect that sets a cookie is not a loop")
            return
        }
        // A cookie that changes nothing sent (no storage, or the caller's own Cookie) is a loop.
        var ignored = try Self.hops(.get, "http://example.org/a")
        guard case .cancelTask = ignored.receive(setsCookie, bodyIsReplayable: true) else {
            Issue.record("the same request again")
            return
        }
        // A loop two hops long is found too.
        var twoHops = try Self.hops()
        _ = twoHops.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        _ = twoHops.complete(Self.completion)
        guard case .cancelTask = twoHops.receive(Self.response(302, location: "/a"), bodyIsReplayable: true) else {
            Issue.record("back to the first request")
            return
        }
    }

    @Test func theMethodTableAndTheHeadersLeftBehind() throws {
        let headers: HTTPHeaders = [
            "Content-Type": "text/plain", "Authorization": "Bearer t", "Cookie": "a=1",
            "Proxy-Authorization": "Basic x", "Host": "example.org", "X-Kept": "yes",
        ]
        let cases: [(HTTPMethod, Int, String)] = [
            (.post, 301, "GET"), (.post, 302, "GET"), (.put, 302, "PUT"), (.post, 303, "GET"),
            (.head, 303, "HEAD"), (.delete, 303, "GET"), (.post, 307, "POST"), (.patch, 308, "PATCH"),
        ]
        for (method, status, expected) in cases {
            var hops = try Self.hops(method, headers: headers)
            _ = hops.receive(Self.response(status, location: "/b"), bodyIsReplayable: true)
            let next = try #require(Self.started(hops.complete(Self.completion))).nextRequest
            #expect(next.method.rawValue == expected, "\(method.rawValue) \(status)")
            let becameGet = expected == "GET" && method != .get
            #expect((next.headers["Content-Type"] == nil) == becameGet, "\(method.rawValue) \(status)")
            #expect(hops.dropsBody == becameGet)
            #expect(next.headers["Authorization"] == "Bearer t", "same origin: credentials kept")
            #expect(next.headers["Host"] == nil)
            #expect(next.headers["X-Kept"] == "yes")
        }
        var away = try Self.hops(headers: headers)
        _ = away.receive(Self.response(302, location: "http://example.org:8080/b"), bodyIsReplayable: true)
        let next = try #require(Self.started(away.complete(Self.completion))).nextRequest
        for name in ["Authorization", "Cookie", "Proxy-Authorization"] {
            #expect(next.headers[name] == nil, "\(name) left behind on another origin")
        }
        #expect(next.headers["X-Kept"] == "yes")
    }

    @Test func aBodyReadOnceStopsAKeepingRedirectButNotAGet() throws {
        var kept = try Self.hops(.post)
        guard case .forward = kept.receive(Self.response(307, location: "/b"), bodyIsReplayable: false) else {
            Issue.record("the 307 is the response")
            return
        }
        var changed = try Self.hops(.post)
        guard case .none = changed.receive(Self.response(303, location: "/b"), bodyIsReplayable: false) else {
            Issue.record("a 303 sends no body: followed")
            return
        }
    }

    @Test func withoutFollowingEveryRedirectIsTheResponse() throws {
        var hops = try Self.hops(asks: false)
        guard case .forward = hops.receive(Self.response(302, location: "/b"), bodyIsReplayable: true) else {
            Issue.record("the 302 is the response")
            return
        }
    }

    @Test func aLocationCourierWillNotSendToFailsAsAnInvalidURL() throws {
        var hops = try Self.hops()
        guard
            case .cancelTask = hops.receive(
                Self.response(302, location: "http://example.org:65536/"),
                bodyIsReplayable: true
            )
        else {
            Issue.record("refused")
            return
        }
        let error = try #require(Self.failure(hops.complete(Self.completion)))
        #expect(error.kind == .invalidURL)
        #expect(error.invalidURLReason?.contains("redirected") == true)
    }

    @Test func eventsOfAnotherPhaseAreNotMistakenForAHead() throws {
        var hops = try Self.hops()
        _ = hops.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        guard case .none = hops.receive(Self.response(200), bodyIsReplayable: true) else {
            Issue.record("a second head during a redirect's exchange is ignored")
            return
        }
        guard case .none = hops.decided(.success(nil)) else {
            Issue.record("a decision nobody asked for changes nothing")
            return
        }
        guard case .done = hops.replayed() else {
            Issue.record("no replay under way")
            return
        }
    }

    @Test func anAnsweredChallengeIsNeitherRecordedNorCarriedIntoARedirect() throws {
        var hops = try Self.hops()
        let answered = RequestHead(
            method: .get,
            url: try #require(URL(string: "http://example.org/a")),
            headers: ["Authorization": "Digest uri=\"/a\""]
        )
        let answer = ChallengeResponder.Answer(next: answered, scheme: "Digest", isStale: false, remember: nil)
        let challenge = ResponseHead(
            url: try #require(URL(string: "http://example.org/a")),
            statusCode: 401,
            httpVersion: "HTTP/1.1",
            headerFields: [("WWW-Authenticate", "Digest realm=\"r\", nonce=\"n\"")]
        )
        guard case .none = hops.receive(challenge, bodyIsReplayable: true, answer: answer) else {
            Issue.record("answered")
            return
        }
        guard case .startNextExchange(let sent, nil, let answered?) = hops.complete(Self.completion) else {
            Issue.record("the answer is sent")
            return
        }
        #expect(sent.headers["Authorization"] != nil)
        #expect(answered.statusCode == 401)
        #expect(hops.current.headers["Authorization"] == nil, "the answer is not the request's")
        // The answer's response redirects on the same origin: the next request carries no
        // stale answer (its own 401 gets a fresh one, for its own URL).
        _ = hops.receive(Self.response(301, location: "/a/"), bodyIsReplayable: true)
        let redirect = try #require(Self.started(hops.complete(Self.completion)))
        #expect(redirect.nextRequest.headers["Authorization"] == nil)
        #expect(redirect.request.headers["Authorization"] == nil, "nor is it recorded")
    }

    @Test func aCookieSetOnTheWayMakesAReturnNoLoop() throws {
        var hops = try Self.hops(.get, "http://example.org/a")
        let toLogin = ResponseHead(
            url: try #require(URL(string: "http://example.org/a")),
            statusCode: 302,
            httpVersion: "HTTP/1.1",
            headerFields: [("Location", "/login"), ("Set-Cookie", "s=1")]
        )
        _ = hops.receive(toLogin, bodyIsReplayable: true, redirectCookie: .stored("s=1"))
        let toLoginPage = try #require(Self.started(hops.complete(Self.completion)))
        #expect(toLoginPage.nextRequest.headers["Cookie"] == "s=1")
        guard
            case .none = hops.receive(
                Self.response(302, location: "/a"),
                bodyIsReplayable: true,
                redirectCookie: .stored("s=1")
            )
        else {
            Issue.record("back to /a, now with the cookie: no loop")
            return
        }
        _ = hops.complete(Self.completion)
        // Once more with the same cookie: /login was asked for with it already.
        guard
            case .cancelTask = hops.receive(
                Self.response(302, location: "/login"),
                bodyIsReplayable: true,
                redirectCookie: .stored("s=1")
            )
        else {
            Issue.record("the same cookie again each time is a loop")
            return
        }
    }

    /// A handler's request is checked for a loop with the cookies it will carry: back to the
    /// first URL with a cookie the first request lacked is no loop, without one it is.
    @Test(arguments: [true, false])
    func aHandlersRequestIsCheckedWithTheCookiesItWillCarry(withCookie: Bool) throws {
        var hops = try Self.hops(.get, "http://example.org/a", asks: nil)
        guard case .ask(let proposed) = hops.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        else {
            Issue.record("asked")
            return
        }
        let back = RequestHead(
            method: proposed.method,
            url: try #require(URL(string: "http://example.org/a")),
            headers: proposed.headers
        )
        let action = hops.decided(.success(back), redirectCookie: .stored(withCookie ? "s=1" : nil))
        guard withCookie else {
            guard case .cancelTask = action else {
                Issue.record("the first request again: a loop")
                return
            }
            return
        }
        guard case .none = action else {
            Issue.record("followed once the exchange ends")
            return
        }
        let redirect = try #require(Self.started(hops.complete(Self.completion)))
        #expect(redirect.nextRequest.headers["Cookie"] == "s=1")
    }

    @Test func aHandlerSendingTheRequestElsewhereLeavesTheCredentialsBehind() throws {
        var hops = try Self.hops(headers: ["Authorization": "Bearer t"], asks: nil)
        guard case .ask(let proposed) = hops.receive(Self.response(302, location: "/b"), bodyIsReplayable: true)
        else {
            Issue.record("asked")
            return
        }
        #expect(proposed.headers["Authorization"] == "Bearer t", "same origin: kept")
        var elsewhere = proposed
        elsewhere = RequestHead(
            method: elsewhere.method,
            url: try #require(URL(string: "http://mirror.example.net/b")),
            headers: elsewhere.headers
        )
        _ = hops.decided(.success(elsewhere))
        let redirect = try #require(Self.started(hops.complete(Self.completion)))
        #expect(redirect.nextRequest.headers["Authorization"] == nil)
    }
}
