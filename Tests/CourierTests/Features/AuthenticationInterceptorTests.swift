import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A user and password for `/basic-auth/:user/:passwd`, which accepts only the password in its path.
private struct Password: AuthenticationCredential, Equatable {
    let password: String
    var requiresRefresh = false
}

/// Sends Basic credentials and refreshes them with `renew`, counting refreshes; a refresh can be
/// held until the test releases it, so that many requests need it at once.
private final class PasswordAuthenticator: Authenticator {
    private let refreshes = Mutex(0)
    private let gate: AsyncStream<Void>?
    private let started: AsyncStream<Void>.Continuation?
    private let renew: @Sendable (Password) throws -> Password

    init(
        gate: AsyncStream<Void>? = nil,
        started: AsyncStream<Void>.Continuation? = nil,
        renew: @escaping @Sendable (Password) throws -> Password
    ) {
        self.gate = gate
        self.started = started
        self.renew = renew
    }

    var refreshCount: Int { refreshes.withLock { $0 } }

    func apply(_ credential: Password, to urlRequest: inout URLRequest) {
        let encoded = Data("user:\(credential.password)".utf8).base64EncodedString()
        urlRequest.setValue("Basic \(encoded)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: Password, for session: Session) async throws -> Password {
        let isFirst = refreshes.withLock { count in
            count += 1
            return count == 1
        }
        started?.yield()
        // Only the first refresh is held: a request refused after it ended starts its own.
        if isFirst, let gate {
            for await _ in gate { break }
        }
        return try renew(credential)
    }

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Password) -> Bool {
        var expected = urlRequest
        apply(credential, to: &expected)
        return urlRequest.value(forHTTPHeaderField: "Authorization")
            == expected.value(forHTTPHeaderField: "Authorization")
    }
}

private struct RefreshFailure: Error, Equatable {}

/// Written as for Alamofire: only the completion form of `refresh`, answered on a queue of its
/// own, and twice (the second answer must be ignored). It refreshes through `inner`'s
/// completion form, whose default runs `inner`'s async one: one authenticator bridging through
/// another must not be taken for one that implements neither.
private final class CompletionStyleAuthenticator: Authenticator {
    let inner: PasswordAuthenticator

    init(inner: PasswordAuthenticator) {
        self.inner = inner
    }

    func apply(_ credential: Password, to urlRequest: inout URLRequest) {
        inner.apply(credential, to: &urlRequest)
    }

    func refresh(
        _ credential: Password,
        for session: Session,
        completion: @escaping @Sendable (Result<Password, any Error>) -> Void
    ) {
        inner.refresh(credential, for: session) { result in
            DispatchQueue.global().async {
                completion(result)
                completion(.failure(RefreshFailure()))
            }
        }
    }

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Password) -> Bool {
        inner.isRequest(urlRequest, authenticatedWith: credential)
    }
}

/// Implements neither form of `refresh`.
private struct NeitherRefreshAuthenticator: Authenticator {
    func apply(_ credential: Password, to urlRequest: inout URLRequest) {}

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Password) -> Bool { true }
}

@Suite struct AuthenticationInterceptorTests {
    private static let concurrency = 50

    @Test(arguments: TransportKind.allCases)
    func manyRefusedRequestsShareOneRefresh(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (gate, release) = AsyncStream<Void>.makeStream()
            let authenticator = PasswordAuthenticator(gate: gate) { _ in Password(password: "new") }
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator,
                credential: Password(password: "old")
            )
            let session = transport.makeSession(interceptor: interceptor)
            let url = server.url("/basic-auth/user/new")
            let results = Task {
                await withTaskGroup(of: Result<Data, CourierError>.self) { group in
                    for _ in 0..<Self.concurrency {
                        group.addTask { await session.request(url).validate().serializingData().result }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            // Every request has been refused with the old password before the refresh may end.
            try await server.waitForRequests(Self.concurrency)
            release.yield()
            let outcomes = await results.value
            #expect(outcomes.allSatisfy { (try? $0.get()) != nil }, "all retried with the new password")
            #expect(authenticator.refreshCount == 1)
            #expect(interceptor.credential == Password(password: "new"))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFailedRefreshFailsEveryWaitingRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (gate, release) = AsyncStream<Void>.makeStream()
            let authenticator = PasswordAuthenticator(gate: gate) { _ in throw RefreshFailure() }
            // A roomy window: only the rule under test keeps refreshes down.
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator,
                credential: Password(password: "old"),
                refreshWindow: .init(interval: 30, maximumAttempts: 100)
            )
            let session = transport.makeSession(interceptor: interceptor)
            let url = server.url("/basic-auth/user/new")
            let results = Task {
                await withTaskGroup(of: CourierError?.self) { group in
                    for _ in 0..<10 {
                        group.addTask { await session.request(url).validate().serializingData().result.failure }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            try await server.waitForRequests(10)
            release.yield()
            let errors = await results.value
            #expect(errors.allSatisfy { $0?.kind == .requestRetryFailed })
            #expect(errors.allSatisfy { $0?.underlyingError as? RefreshFailure == RefreshFailure() })
            // Requests refused after the failed refresh ended fail with its error, as in Alamofire:
            // they start no refresh of their own.
            #expect(authenticator.refreshCount == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRefreshedCredentialThatStillNeedsRefreshingIsNeverSent(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let authenticator = PasswordAuthenticator { _ in Password(password: "new", requiresRefresh: true) }
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator,
                credential: Password(password: "old", requiresRefresh: true),
                refreshWindow: .init(interval: 30, maximumAttempts: 3)
            )
            let session = transport.makeSession(interceptor: interceptor)
            let error = await session.request(server.url("/basic-auth/user/new")).serializingData().result.failure
            #expect(error?.kind == .requestAdaptationFailed)
            #expect(error?.underlyingError as? AuthenticationError == .excessiveRefresh)
            #expect(authenticator.refreshCount == 3, "each refresh counts toward the window")
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anExpiredCredentialIsRefreshedBeforeSending(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let authenticator = PasswordAuthenticator { _ in Password(password: "new") }
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator,
                credential: Password(password: "old", requiresRefresh: true)
            )
            let session = transport.makeSession(interceptor: interceptor)
            _ = try await session.request(server.url("/basic-auth/user/new")).validate().serializingData().value
            _ = try await session.request(server.url("/basic-auth/user/new")).validate().serializingData().value
            #expect(authenticator.refreshCount == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func withoutARefreshWindowAnyNumberOfRefreshesIsAllowed(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // Seven refreshes in a row, more than the default window's five.
            let authenticator = PasswordAuthenticator { credential in
                let count = (Int(credential.password) ?? 0) + 1
                return Password(password: "\(count)", requiresRefresh: count < 7)
            }
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator,
                credential: Password(password: "0", requiresRefresh: true),
                refreshWindow: nil
            )
            #expect(interceptor.refreshWindow == nil)
            let session = transport.makeSession(interceptor: interceptor)
            _ = try await session.request(server.url("/basic-auth/user/7")).validate().serializingData().value
            #expect(authenticator.refreshCount == 7)
            await session.invalidate()

            // The default window calls the same sequence a loop.
            let windowed = PasswordAuthenticator { credential in
                let count = (Int(credential.password) ?? 0) + 1
                return Password(password: "\(count)", requiresRefresh: count < 7)
            }
            let limited = transport.makeSession(
                interceptor: AuthenticationInterceptor(
                    authenticator: windowed,
                    credential: Password(password: "0", requiresRefresh: true)
                )
            )
            let error = await limited.request(server.url("/basic-auth/user/7")).serializingData().result.failure
            #expect(error?.underlyingError as? AuthenticationError == .excessiveRefresh)
            #expect(windowed.refreshCount == 5)
            await limited.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRefreshLoopStops(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // Every refresh yields a password the server still refuses.
            let authenticator = PasswordAuthenticator { _ in Password(password: "still-wrong") }
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator,
                credential: Password(password: "old"),
                refreshWindow: .init(interval: 60, maximumAttempts: 3)
            )
            let session = transport.makeSession(interceptor: interceptor)
            let error = await session.request(server.url("/basic-auth/user/new")).validate().serializingData().result
                .failure
            #expect(error?.kind == .requestRetryFailed)
            #expect(error?.underlyingError as? AuthenticationError == .excessiveRefresh)
            #expect(authenticator.refreshCount == 3)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func noCredentialFailsBeforeSending(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let authenticator = PasswordAuthenticator { $0 }
            let session = transport.makeSession(interceptor: AuthenticationInterceptor(authenticator: authenticator))
            let error = await session.request(server.url("/basic-auth/user/new")).serializingData().result.failure
            #expect(error?.kind == .requestAdaptationFailed)
            #expect(error?.underlyingError as? AuthenticationError == .missingCredential)
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCancelledWaiterStopsWaitingForTheRefresh(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (gate, release) = AsyncStream<Void>.makeStream()
            let (started, refreshStarted) = AsyncStream<Void>.makeStream()
            let authenticator = PasswordAuthenticator(gate: gate, started: refreshStarted) { _ in
                Password(password: "new")
            }
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator,
                credential: Password(password: "old", requiresRefresh: true)
            )
            let session = transport.makeSession(interceptor: interceptor)
            let url = server.url("/basic-auth/user/new")
            // The adaptation of a cancelled request is a cancelled task waiting for the refresh.
            let waiter = Task { try await interceptor.adapt(URLRequest(url: url), for: session) }
            for await _ in started { break }
            waiter.cancel()
            // The refresh is still held: the waiter must give up without it.
            let outcome = await value(within: hangLimit) { await waiter.result }
            #expect(throws: CancellationError.self) { try outcome?.get() }
            release.yield()
            // The refresh went on without its waiter and stored its credential.
            _ = try await session.request(url).validate().serializingData().value
            #expect(authenticator.refreshCount == 1)
            #expect(interceptor.credential == Password(password: "new"))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anAuthenticatorWrittenForAlamofireRefreshesWithACompletion(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let inner = PasswordAuthenticator { _ in Password(password: "new") }
            let interceptor = AuthenticationInterceptor(
                authenticator: CompletionStyleAuthenticator(inner: inner),
                credential: Password(password: "old")
            )
            let session = transport.makeSession(interceptor: interceptor)
            _ = try await session.request(server.url("/basic-auth/user/new")).validate().serializingData().value
            #expect(inner.refreshCount == 1)
            #expect(interceptor.credential == Password(password: "new"))
            // The async form, awaited directly, sees the first answer only.
            let fresh = try await CompletionStyleAuthenticator(inner: inner).refresh(
                Password(password: "x"),
                for: session
            )
            #expect(fresh == Password(password: "new"))
            await session.invalidate()
        }
    }

    @Test func anAuthenticatorWithNeitherRefreshFailsInsteadOfLooping() async throws {
        let session = Session()
        let outcome = await value(within: hangLimit) { () async -> Result<Password, any Error> in
            do {
                return .success(try await NeitherRefreshAuthenticator().refresh(Password(password: "x"), for: session))
            } catch {
                return .failure(error)
            }
        }
        #expect(throws: AuthenticationError.refreshNotImplemented) { try outcome?.get() }
        await session.invalidate()
    }
}
