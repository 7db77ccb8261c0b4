import Courier
import CourierNIO
import CourierTestServer
import Foundation
import Testing

/// The README's "Using Courier" example, verbatim but for the server's address, so it stays true.
@Suite struct ReadmeExampleTests {
    struct Echo: Decodable, Sendable {
        let args: [String: String]
        let url: String
    }

    @Test(arguments: [false, true])
    func usingCourierExampleWorks(overAsyncHTTPClient: Bool) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString  // README: http://127.0.0.1:8080
            let session = overAsyncHTTPClient ? Session() : Session(transport: .urlSession)

            let echo = try await session.request("\(base)/get", parameters: ["q": "swift"])
                .validate()
                .serializingDecodable(Echo.self).value
            #expect(echo.args == ["q": "swift"])

            let code: Int? = await withCheckedContinuation { continuation in
                session.request("\(base)/status/503")
                    .validate(statusCode: 200..<300)
                    .responseDecodable(of: Echo.self) { response in
                        continuation.resume(returning: response.error?.responseCode)
                    }
            }
            #expect(code == 503)
        }
    }

    @Test(arguments: [false, true])
    func interceptorExampleWorks(overAsyncHTTPClient: Bool) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let interceptor = Interceptor(
                adaptHandler: { request, _ in
                    var request = request
                    request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
                    return request
                },
                retryHandler: { request, _, error in
                    // A 503 or a dropped connection: try twice more, half a second apart.
                    request.retryCount < 2 && (error.responseCode == 503 || error.urlError != nil)
                        ? .retryWithDelay(0.5) : .doNotRetry
                }
            )
            let transport: any Transport = overAsyncHTTPClient ? AsyncHTTPClientTransport() : URLSessionTransport()
            let retrying = Session(transport: transport, interceptor: interceptor)
            let request = retrying.request("\(base)/fault/flaky/demo?times=2&status=503").validate()
            let body = try await request.serializingData().value
            #expect(!body.isEmpty)
            #expect(request.retryCount == 2)
            #expect(request.requests.count == 3)
            #expect(
                request.requests.allSatisfy { $0.value(forHTTPHeaderField: "Authorization") == "Bearer secret-token" }
            )
            await retrying.invalidate()
        }
    }

    @Test(arguments: [false, true])
    func retryPolicyExampleWorks(overAsyncHTTPClient: Bool) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let transport: any Transport = overAsyncHTTPClient ? AsyncHTTPClientTransport() : URLSessionTransport()
            let session = Session(transport: transport, interceptor: RetryPolicy())
            let data = try await session.request("\(base)/fault/flaky/p?times=2&status=503")
                .validate()
                .serializingData().value
            #expect(!data.isEmpty)
            #expect(server.attempts(forKey: "p") == 3)
            await session.invalidate()
        }
    }

    struct Token: AuthenticationCredential {
        let value: String
        let expiration: Date
        var requiresRefresh: Bool { Date(timeIntervalSinceNow: 60) > expiration }
    }

    struct TokenAuthenticator: Authenticator {
        func apply(_ token: Token, to request: inout URLRequest) {
            request.setValue("Bearer \(token.value)", forHTTPHeaderField: "Authorization")
        }
        func refresh(_ token: Token, for session: Session) async throws -> Token {
            Token(value: "fresh", expiration: Date(timeIntervalSinceNow: 3600))
        }
        func isRequest(_ request: URLRequest, authenticatedWith token: Token) -> Bool {
            request.value(forHTTPHeaderField: "Authorization") == "Bearer \(token.value)"
        }
    }

    @Test(arguments: [false, true])
    func authenticationExampleWorks(overAsyncHTTPClient: Bool) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let transport: any Transport = overAsyncHTTPClient ? AsyncHTTPClientTransport() : URLSessionTransport()
            let expired = Token(value: "stale", expiration: .distantPast)
            let interceptor = AuthenticationInterceptor(authenticator: TokenAuthenticator(), credential: expired)
            let authenticated = Session(transport: transport, interceptor: interceptor)
            let request = authenticated.request("\(base)/bearer").validate()
            _ = try await request.serializingData().value
            #expect(request.lastRequest?.value(forHTTPHeaderField: "Authorization") == "Bearer fresh")
            await authenticated.invalidate()
        }
    }

    @Test func budgetExampleConfigures() {
        let configuration = Session.Configuration {
            $0.retryBudget = RetryBudget(ratio: 0.1)
            $0.requestDeadline = 10
            $0.retryTriggers = [NetworkMonitor()]
        }
        #expect(configuration.retryBudget?.ratio == 0.1)
        #expect(configuration.requestDeadline == 10)
        #expect(configuration.retryTriggers.count == 1)
    }

    @Test(arguments: [false, true])
    func transfersExampleWorks(overAsyncHTTPClient: Bool) async throws {
        try await withTemporaryDirectory { folder in
            try await TestServer.withRunningServer { server in
                let base = server.baseURL.absoluteString
                let session = overAsyncHTTPClient ? Session() : Session(transport: .urlSession)

                let destination = DownloadRequest.suggestedDownloadDestination(in: folder, options: .removePreviousFile)
                let download = session.download("\(base)/range/1000000", to: destination).validate()
                let file = download.serializingDownloadedFileURL()
                var last = 0.0
                for await progress in download.downloadProgressUpdates() { last = progress.fractionCompleted }
                #expect(try await file.value == folder.appendingPathComponent("1000000"))
                #expect(last == 1)

                // Cancelled from the progress handler, on a queue of its own: a test task on a
                // busy machine may wake seconds late, after the 2 s transfer has ended.
                let resumed: URL? = await withCheckedContinuation { continuation in
                    let calls = CallCounter()
                    let partial = session.download("\(base)/range/1000000?duration=2")
                    // A serial queue: the first update with bytes is the one that cancels.
                    partial.downloadProgress(queue: DispatchQueue(label: "test.progress")) { progress in
                        guard progress.completedUnitCount > 0 else { return }
                        calls.increment()
                        guard calls.value == 1 else { return }
                        partial.cancel(byProducingResumeData: { data in
                            guard let data else { return continuation.resume(returning: nil) }
                            session.download(resumingWith: data, to: destination).responseURL {
                                continuation.resume(returning: $0.value)
                            }
                        })
                    }
                    partial.resume()
                }
                let resumedBytes = try resumed.map { try Data(contentsOf: $0) }
                #expect(
                    resumedBytes == rangePattern(1_000_000),
                    "resumed: \(String(describing: resumed)), \(resumedBytes?.count ?? -1) bytes"
                )

                let photoURL = folder.appendingPathComponent("photo.jpg")
                try Data("jpeg".utf8).write(to: photoURL)
                let receipt = try await session.upload(photoURL, to: "\(base)/upload")
                    .serializingDecodable(UploadReceipt.self).value
                #expect(receipt == UploadReceipt(of: Data("jpeg".utf8)))
                let form = try await session.upload(
                    multipartFormData: { form in
                        form.append(Data("Ada".utf8), withName: "name")
                        form.append(photoURL, withName: "photo")
                    },
                    to: "\(base)/upload/multipart"
                ).serializingDecodable(MultipartReceipt.self).value
                #expect(form.parts.map(\.contentType) == [nil, "image/jpeg"])

                struct Event: Decodable, Sendable { let id: Int }
                var ids: [Int] = []
                for try await event in session.streamRequest("\(base)/stream/20").validate()
                    .streamingDecodable(Event.self)
                {
                    ids.append(event.id)
                }
                #expect(ids == Array(0..<20))
            }
        }
    }

    /// The README's redirect, cookie, cache and authentication examples (issue 15), verbatim but
    /// for the server's address.
    @Test(arguments: [false, true])
    func redirectCookieCacheAndAuthenticationExamplesWork(overAsyncHTTPClient: Bool) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let session = overAsyncHTTPClient ? Session() : Session(transport: .urlSession)

            let redirect = await session.request("\(base)/redirect/1")
                .redirect(using: .doNotFollow)
                .serializingData().response
            #expect(redirect.head?.statusCode == 302)

            let tagged = session.request("\(base)/redirect/2").redirect(
                using: .modify { _, next, _ in
                    var next = next
                    next.setValue("yes", forHTTPHeaderField: "X-Redirected")
                    return next
                }
            )
            _ = try await tagged.serializingData().value
            #expect(tagged.redirects.count == 2)
            #expect(tagged.redirects.allSatisfy { $0.nextRequest.headers["X-Redirected"] == "yes" })

            let jar = CookieJar()
            let withCookies = Session(
                configuration: .init { $0.cookieStorage = jar },
                transport: overAsyncHTTPClient ? nil : URLSessionTransport()
            )
            _ = try await withCookies.request("\(base)/cookies/set?flavour=oat").serializingData().value
            #expect(jar.cookies(for: server.baseURL).map(\.name) == ["flavour"])

            let cached = Session(
                configuration: .init { $0.httpCache = .memory(byteLimit: 50 << 20) },
                transport: overAsyncHTTPClient ? nil : URLSessionTransport()
            )
            let first = cached.request("\(base)/cache/60")
            _ = try await first.serializingData().value
            let second = cached.request("\(base)/cache/60")
            _ = try await second.serializingData().value
            #expect(first.metrics?.responseSource == .network)
            #expect(second.metrics?.responseSource == .cache)
            _ = try await cached.request("\(base)/cache/60").cache(.noCache).serializingData().value

            let profile = try await session.request("\(base)/basic-auth/ada/lovelace")
                .authenticate(username: "ada", password: "lovelace", persistence: .none)
                .validate()
                .serializingData().value
            #expect(!profile.isEmpty)
            await withCookies.invalidate()
            await cached.invalidate()
        }
    }
}
