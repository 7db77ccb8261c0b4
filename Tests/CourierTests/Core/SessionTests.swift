import Courier
import CourierNIO
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct SessionTests {
    @Test(arguments: TransportKind.allCases)
    func invalidURLsFailWithoutCrashing(transport: TransportKind) async {
        let session = transport.makeSession()
        let error = await failure(of: session.request("ht tp://not a url"))
        #expect(error?.kind == .invalidURL)
        #expect(error?.invalidURLString == "ht tp://not a url")
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func headerValuesWithLineBreaksAreRejected(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let error = await failure(of: session.request(server.url("/get"), headers: ["X-Evil": "a\r\nInjected: 1"]))
            #expect(error?.kind == .invalidHeader)
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            let method = await failure(of: session.request(server.url("/get"), method: HTTPMethod(rawValue: "GET /x")))
            #expect(method?.kind == .invalidHeader)
            await session.invalidate()
        }
    }

    /// The session's headers are checked once, when it is made; a request's own header of the
    /// same name replaces an invalid one, and a request's invalid header fails whatever the
    /// session's are.
    @Test(arguments: TransportKind.allCases)
    func sessionHeadersAreCheckedAsTheRequestsAre(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let invalid = transport.makeSession { $0.headers = ["X-Session": "a\nb"] }
            let rejected = await failure(of: invalid.request(server.url("/get")))
            #expect(rejected?.kind == .invalidHeader)
            let replaced = try await invalid.request(server.url("/headers"), headers: ["X-Session": "fine"])
                .serializingData().value
            #expect(String(decoding: replaced, as: UTF8.self).contains("fine"))
            await invalid.invalidate()

            let valid = transport.makeSession { $0.headers.add(name: "X-Session", value: "ok") }
            let own = await failure(of: valid.request(server.url("/get"), headers: ["X-Own": "a\r\nb"]))
            #expect(own?.kind == .invalidHeader)
            let sent = try await valid.request(server.url("/headers")).serializingData().value
            #expect(String(decoding: sent, as: UTF8.self).contains("X-Session"))
            await valid.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func unencodableParametersFail(transport: TransportKind) async {
        let session = transport.makeSession()
        let error = await failure(of: session.request("http://127.0.0.1:9/", parameters: [1, 2]))
        #expect(error?.kind == .parameterEncodingFailed)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func refusedConnectionsMapToURLError(transport: TransportKind) async throws {
        let closed = try ClosedPort()
        let session = transport.makeSession()
        let error = await failure(of: session.request("http://127.0.0.1:\(closed.port)/get"))
        #expect(error?.kind == .transportFailed)
        #expect(error?.urlError?.code == .cannotConnectToHost)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func truncatedBodiesFail(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let short = await failure(of: session.request(server.url("/fault/content-length/100?declared=500")))
            #expect(short?.kind == .transportFailed)
            #expect(short?.urlError?.code == .networkConnectionLost)
            let dropped = await failure(of: session.request(server.url("/fault/drop/100000?after=5000")))
            #expect(dropped?.urlError?.code == .networkConnectionLost)
            let reset = await failure(of: session.request(server.url("/fault/reset")))
            #expect(reset?.kind == .transportFailed)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func timeoutIntervalEndsAnAttemptThatStalls(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.timeoutInterval = 0.5 }
            let start = ContinuousClock.now
            let stalled = await failure(of: session.request(server.url("/fault/hang?seconds=60")))
            #expect(stalled?.kind == .transportFailed)
            #expect(stalled?.urlError?.code == .timedOut)
            #expect(ContinuousClock.now - start >= .milliseconds(500), "never sooner than asked")
            // A request's own timeout wins over the session's.
            let patient = transport.makeSession { $0.timeoutInterval = 60 }
            let own = await failure(
                of: patient.request(server.url("/fault/hang?seconds=60")) { $0.timeoutInterval = 0.5 }
            )
            #expect(own?.urlError?.code == .timedOut)
            await session.invalidate()
            await patient.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func outOfRangeTimeoutsAndDeadlinesNeverTrap(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            for value in [Double.infinity, .nan, -1, 0, 1e300, .greatestFiniteMagnitude] {
                let session = transport.makeSession {
                    $0.timeoutInterval = value
                    $0.requestDeadline = value == 0 ? nil : value  // 0 is a deadline already passed
                }
                // FoundationNetworking traps on an infinite or NaN timeout set through the setter.
                let set = await session.request(server.url("/get")) { $0.timeoutInterval = value }
                    .validate().serializingData().result
                #expect(set.failure == nil, "timeout \(value)")
                let configured = await session.request(server.url("/get")).validate().serializingData().result
                #expect(configured.failure == nil, "timeout \(value)")
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func timeoutIntervalCountsIdleTimeNotTotalTime(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // Twelve bytes over eight seconds: never 6 s without data, though 8 s in all. The
            // margin is wide because the suite's other tests load the machine meanwhile.
            let session = transport.makeSession { $0.timeoutInterval = 6 }
            let data = try await session.request(server.url("/drip?duration=8&numbytes=12")).serializingData().value
            #expect(data == Data(String(repeating: "*", count: 12).utf8))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func authenticationChallengesArriveAsResponses(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // A 401 naming a scheme (`WWW-Authenticate`): FoundationNetworking hung on it forever.
            for path in ["/basic-auth/user/pass", "/status/401"] {
                let response = await value(within: hangLimit) {
                    await session.request(server.url(path)).validate().serializingData().response
                }
                #expect(response?.response?.statusCode == 401, "\(path)")
                #expect(response?.error?.responseCode == 401, "\(path)")
            }
            let headers: HTTPHeaders = [.authorization(username: "user", password: "wrong")]
            let refused = await value(within: hangLimit) {
                await session.request(server.url("/basic-auth/user/pass"), headers: headers).serializingData().response
            }
            #expect(refused?.response?.statusCode == 401, "a refused credential too")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func bodiesOverTheLimitFail(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.maximumResponseBodySize = 10_000 }
            let error = await failure(of: session.request(server.url("/bytes/50000")))
            #expect(error?.kind == .bodyTooLarge)
            let small = await session.request(server.url("/bytes/5000")).serializingData().result
            #expect((try? small.get())?.count == 5000)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func invalidatedSessionsFailNewAndRunningRequests(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/fault/hang"))
            let running = request.serializingData()
            try await server.waitForRequests(1)
            await session.invalidate()
            guard case .failure(let error) = await running.result else {
                Issue.record("invalidation ends running requests")
                return
            }
            // Why it ended, as in Alamofire: the session went away, nobody cancelled it.
            #expect(error.kind == .sessionInvalidated)
            #expect(request.isFinished)
            let late = await failure(of: session.request(server.url("/get")))
            #expect(late?.kind == .sessionInvalidated)
        }
    }

    /// `url` with `user` and `password` (percent-encoded already) as its user info.
    private func withUserInfo(_ url: URL, user: String, password: String) throws -> URL {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.percentEncodedUser = user
        components.percentEncodedPassword = password
        return try #require(components.url)
    }

    @Test(arguments: TransportKind.allCases)
    func userInfoIsSentAsBasicAuthenticationAndNeverShown(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let protected = try withUserInfo(server.url("/basic-auth/ada/s3cret"), user: "ada", password: "s3cret")
            let request = session.request(protected).validate()
            _ = try await request.serializingData().value
            #expect(request.response?.statusCode == 200)
            // The credentials left the URL before anything could print it.
            #expect(request.request?.url?.user == nil)
            #expect(request.request?.url?.password == nil)
            // (The path names the password too, for the route: look for the user info.)
            #expect(!request.description.contains("ada:s3cret"))
            #expect(!request.cURLDescription().contains("ada:s3cret"))
            #expect(!request.cURLDescription().contains(Data("ada:s3cret".utf8).base64EncodedString()))
            #expect(request.performedRequests.allSatisfy { $0.url?.absoluteString.contains("ada:s3cret") == false })

            let echoed = try withUserInfo(server.url("/headers"), user: "us%40er", password: "p%3Ass")
            let headers = try await session.request(echoed).serializingDecodable([String: [String: String]].self)
                .value
            // One header (repeats would be joined with a comma), decoded from the percent-encoding.
            #expect(headers["headers"]?["Authorization"] == "Basic " + Data("us@er:p:ss".utf8).base64EncodedString())
            await session.invalidate()
        }
    }

    /// A request made of a URL, a method and headers is sent from its parts; its `URLRequest`,
    /// built when read, says the same. One built from a `URLRequest` keeps that `URLRequest`.
    @Test(arguments: TransportKind.allCases)
    func theRequestHeadAndItsURLRequestAgree(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.headers = ["X-Session": "s", "X-Both": "session"] }
            let request = session.request(
                server.url("/headers"),
                method: .get,
                headers: ["X-Caller": "c", "x-both": "caller"]
            )
            let echoed = try await request.serializingDecodable([String: [String: String]].self).value
            #expect(echoed["headers"]?["X-Caller"] == "c")
            #expect(echoed["headers"]?["X-Session"] == "s")
            #expect(echoed["headers"]?["X-Both"] == "caller", "the caller's header wins over the session's")
            let head = try #require(request.requestHead)
            #expect(head.method == .get && head.url == server.url("/headers"))
            #expect(head.headers.map(\.name) == ["X-Caller", "x-both", "X-Session"])
            let urlRequest = try #require(request.request)
            #expect(urlRequest.url == head.url && urlRequest.httpMethod == "GET")
            #expect(urlRequest.value(forHTTPHeaderField: "X-Both") == "caller")
            #expect(urlRequest.allHTTPHeaderFields?.count == 3)
            #expect(request.performedRequests.count == 1)

            var own = URLRequest(url: server.url("/headers"), cachePolicy: .reloadIgnoringLocalCacheData)
            own.setValue("o", forHTTPHeaderField: "X-Own")
            let fromURLRequest = session.request(own)
            let ownEchoed = try await fromURLRequest.serializingDecodable([String: [String: String]].self).value
            #expect(ownEchoed["headers"]?["X-Own"] == "o" && ownEchoed["headers"]?["X-Session"] == "s")
            #expect(
                fromURLRequest.request?.cachePolicy == .reloadIgnoringLocalCacheData,
                "the caller's URLRequest, kept"
            )
            #expect(fromURLRequest.requestHead?.headers["x-own"] == "o")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anAuthorizationHeaderWinsOverUserInfo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let url = try withUserInfo(server.url("/headers"), user: "ada", password: "s3cret")
            let headers = try await session.request(url, headers: [.authorization(bearerToken: "token")])
                .serializingDecodable([String: [String: String]].self).value
            #expect(headers["headers"]?["Authorization"] == "Bearer token")
            let wrong = try withUserInfo(server.url("/basic-auth/ada/s3cret"), user: "ada", password: "wrong")
            let refused = await session.request(wrong).validate().serializingData().result.failure
            #expect(refused?.responseCode == 401)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func credentialsDoNotFollowRedirectsToAnotherOrigin(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { origin in
            try await TestServer.withRunningServer { other in
                let session = transport.makeSession()
                let headers: HTTPHeaders = [
                    .authorization(bearerToken: "secret"), HTTPHeader(name: "Cookie", value: "a=1"),
                ]
                let elsewhere = other.url("/headers").absoluteString
                let crossOrigin = try await session.request(
                    origin.url("/redirect-to"),
                    parameters: ["url": elsewhere],
                    headers: headers
                ).serializingDecodable([String: [String: String]].self).value
                #expect(crossOrigin["headers"]?["Authorization"] == nil)
                #expect(crossOrigin["headers"]?["Cookie"] == nil)
                let sameOrigin = try await session.request(
                    origin.url("/redirect-to"),
                    parameters: ["url": "/headers"],
                    headers: headers
                ).serializingDecodable([String: [String: String]].self).value
                #expect(sameOrigin["headers"]?["Authorization"] == "Bearer secret")
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func sessionHeadersApplyUnlessTheRequestSetsItsOwn(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            var defaults = HTTPHeaders.default
            defaults.add(name: "X-Session", value: "s")
            defaults.add(name: "X-Both", value: "session")
            let session = transport.makeSession { $0.headers = defaults }
            let echo = try await session.request(server.url("/headers"), headers: ["X-Both": "request"])
                .serializingDecodable([String: [String: String]].self).value
            #expect(echo["headers"]?["X-Session"] == "s")
            #expect(echo["headers"]?["X-Both"] == "request")
            #expect(echo["headers"]?["Accept-Language"] != nil)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func gzipBodiesAreDecoded(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let document = try await session.request(server.url("/gzip")).validate()
                .serializingDecodable([String: JSONScalar].self).value
            #expect(document["gzipped"] == .bool(true))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func answersMatchRealHttpbin(transport: TransportKind) async throws {
        guard let httpbin = ProcessInfo.processInfo.environment["HTTPBIN_URL"] else { return }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            for base in [server.baseURL.absoluteString, httpbin] {
                let echo = try await session.request(base + "/get", parameters: ["q": "swift"]).validate()
                    .serializingDecodable(Echo.self).value
                #expect(echo.args == ["q": "swift"], "\(base)")
                let status = await failure(of: session.request(base + "/status/418").validate())
                #expect(status?.responseCode == 418, "\(base)")
                let auth = try await session.request(
                    base + "/basic-auth/u/p",
                    headers: [.authorization(username: "u", password: "p")]
                )
                .validate().serializingDecodable([String: JSONScalar].self).value
                #expect(auth["authenticated"] == .bool(true), "\(base)")
            }
            await session.invalidate()
        }
    }
}

/// A JSON scalar, for decoding flat objects whose values mix types.
enum JSONScalar: Decodable, Equatable, Sendable {
    case bool(Bool)
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .other
        }
    }
}

@Suite struct DefaultSessionTests {
    @Test func moduleLevelRequestsUseTheDefaultSession() async throws {
        try await TestServer.withRunningServer { server in
            let echo = try await Courier.request(server.url("/get"), parameters: ["from": "default"])
                .serializingDecodable(Echo.self).value
            #expect(echo.args == ["from": "default"])
            let request = Courier.request(server.url("/get"))
            #expect(request.delegate === Session.default)
            request.cancel()
        }
    }
}

@Suite struct DefaultTransportTests {
    @Test func sessionsRunOnAsyncHTTPClientWhenCourierNIOIsLinked() {
        #expect(Session().transport is AsyncHTTPClientTransport)
        #expect(Session.default.transport is AsyncHTTPClientTransport)
        #expect(Session(transport: .urlSession).transport is URLSessionTransport)
    }
}

extension DefaultTransportTests {
    @Test func invalidatingOneSessionLeavesTheSharedTransportToOthers() async throws {
        try await TestServer.withRunningServer { server in
            let first = Session()
            await first.invalidate()
            let second = Session()
            let data = try await second.request(server.url("/bytes/10")).serializingData().value
            #expect(data.count == 10)
        }
    }
}
