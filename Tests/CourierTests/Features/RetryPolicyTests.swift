import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body of `/fault/flaky/:key` and `/fault/retry-after/:key`.
private struct Attempts: Decodable, Sendable {
    let attempts: Int
}

/// Asks a ``RetryPolicy``, then notes what it decided and whether deciding built the failed
/// attempt's `HTTPURLResponse`.
private final class HeadCheckingRetrier: RequestInterceptor {
    let policy: RetryPolicy
    let decisions = Mutex<[(status: Int?, delay: TimeInterval?, built: Bool?)]>([])

    init(policy: RetryPolicy) {
        self.policy = policy
    }

    func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        let result = await policy.retry(request, for: session, dueTo: error)
        var delay: TimeInterval?
        if case .retryWithDelay(let seconds) = result { delay = seconds }
        let head = request.responseHead
        decisions.withLock { $0.append((head?.statusCode, delay, head?.hasHTTPURLResponse)) }
        return result
    }
}

@Suite struct RetryPolicyTests {
    // MARK: - Backoff and Retry-After, without a network

    @Test func delayCeilingsFollowTheDocumentedTable() {
        let policy = RetryPolicy()
        let ceilings = (0..<8).map { policy.delayCeiling(forRetryCount: $0) }
        #expect(ceilings == [0.5, 1, 2, 4, 8, 16, 30, 30])
        #expect(RetryPolicy(maximumBackoff: 3).delayCeiling(forRetryCount: 10_000) == 3, "no overflow")
        #expect(RetryPolicy(usesJitter: false).delay(forRetryCount: 2) == 2)
    }

    @Test(arguments: [Double.infinity, .nan, 1e300, -1, -.infinity, .greatestFiniteMagnitude])
    func outOfRangeSettingsGiveFiniteDelays(value: Double) {
        let policies = [
            RetryPolicy(maximumBackoff: value),
            RetryPolicy(exponentialBackoffBase: value, maximumBackoff: value),
            RetryPolicy(exponentialBackoffScale: value, maximumBackoff: value),
            RetryPolicy(exponentialBackoffBase: value, exponentialBackoffScale: value),
            RetryPolicy(exponentialBackoffBase: value, exponentialBackoffScale: value, usesJitter: false),
            RetryPolicy(exponentialBackoffBase: 1e10, maximumBackoff: value),
        ]
        for policy in policies {
            for retryCount in [0, 1, 5, 64, 1100, Int.max] {
                // `Double.random(in: 0..<.infinity)` traps: the delay must be finite.
                let delay = policy.delay(forRetryCount: retryCount)
                #expect(delay.isFinite && delay >= 0 && delay <= RetryPolicy.longestDelay)
                let ceiling = policy.delayCeiling(forRetryCount: retryCount)
                #expect(ceiling.isFinite && ceiling >= 0 && ceiling <= RetryPolicy.longestDelay)
            }
        }
        #expect(RetryPolicy(maximumBackoff: .infinity, usesJitter: false).delay(forRetryCount: 2) == 2)
        #expect(RetryPolicy(maximumBackoff: .infinity, usesJitter: false).delay(forRetryCount: 5000) == 1e9)
    }

    @Test func jitterDrawsBelowTheCeiling() {
        let policy = RetryPolicy()
        let delays = (0..<1000).map { _ in policy.delay(forRetryCount: 3) }
        #expect(delays.allSatisfy { $0 >= 0 && $0 < 4 })
        #expect(Set(delays).count > 900, "spread out, not one value")
        #expect(delays.contains { $0 < 1 } && delays.contains { $0 > 3 })
    }

    @Test func retryAfterReadsSecondsAndAllThreeDateForms() throws {
        let now = try #require(RetryAfter.date(from: "Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(RetryAfter.delay(from: "120", now: now) == 120)
        #expect(RetryAfter.delay(from: " 7 ", now: now) == 7)
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:50:07 GMT", now: now) == 30)
        #expect(RetryAfter.delay(from: "Sunday, 06-Nov-94 08:50:07 GMT", now: now) == 30)
        #expect(RetryAfter.delay(from: "Sun Nov  6 08:50:07 1994", now: now) == 30)
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:00:00 GMT", now: now) == 0, "a past date: no wait")
        #expect(RetryAfter.delay(from: "soon", now: now) == nil)
        #expect(RetryAfter.delay(from: "-5", now: now) == nil)
        #expect(RetryAfter.delay(from: "", now: now) == nil)
        #expect(RetryAfter.delay(from: String(repeating: "9", count: 400), now: now) == .greatestFiniteMagnitude)
    }

    // MARK: - Against the server

    /// A policy whose backoff is too short to slow the tests down.
    private static let quick = RetryPolicy(exponentialBackoffScale: 0.01)

    @Test(arguments: TransportKind.allCases)
    func serverErrorsAreRetriedUntilTheySucceed(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick)
            let request = session.request(server.url("/fault/flaky/p503?times=2&status=503")).validate()
            let answer = try await request.serializingDecodable(Attempts.self).value
            #expect(answer.attempts == 3)
            #expect(request.retryCount == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func retriesStopAtTheLimit(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick)
            let request = session.request(server.url("/fault/flaky/plimit?times=5&status=502")).validate()
            let error = await request.serializingData().result.failure
            #expect(error?.responseCode == 502)
            #expect(server.attempts(forKey: "plimit") == 3, "the first attempt and two retries")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func droppedConnectionsAreRetried(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick)
            let answer = try await session.request(server.url("/fault/flaky/pdrop?times=1&fault=drop"))
                .serializingDecodable(Attempts.self).value
            #expect(answer.attempts == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func postIsRetriedOnlyWhenTheCallerSaysItIsSafe(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick)
            let plain = await session.request(server.url("/fault/flaky/post?times=1&status=503"), method: .post)
                .validate().serializingData().result.failure
            #expect(plain?.responseCode == 503)
            #expect(server.attempts(forKey: "post") == 1, "a POST is not sent twice by default")

            let keyed = try await session.request(
                server.url("/fault/flaky/keyed?times=1&status=503"),
                method: .post,
                headers: ["Idempotency-Key": "order-42"]
            ).validate().serializingDecodable(Attempts.self).value
            #expect(keyed.attempts == 2)

            var optIn = Self.quick
            optIn.retriesNonIdempotentRequests = true
            let opted = try await session.request(
                server.url("/fault/flaky/optin?times=1&status=503"),
                method: .post,
                interceptor: optIn
            ).validate().serializingDecodable(Attempts.self).value
            #expect(opted.attempts == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func retryAfterIsHonoured(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick)
            let start = ContinuousClock.now
            let answer = try await session.request(server.url("/fault/retry-after/wait?times=1&seconds=1"))
                .validate().serializingDecodable(Attempts.self).value
            #expect(answer.attempts == 2)
            #expect(ContinuousClock.now - start >= .milliseconds(950), "waited what the server asked")

            let limited = try await session.request(server.url("/fault/retry-after/many?times=1&status=429&seconds=0"))
                .validate().serializingDecodable(Attempts.self).value
            #expect(limited.attempts == 2, "a 429 with Retry-After is retried")

            let dated = try await session.request(server.url("/fault/retry-after/dated?times=1&seconds=1&date=true"))
                .validate().serializingDecodable(Attempts.self).value
            #expect(dated.attempts == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func retryAfterIsCappedByTheMaximum(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            var policy = Self.quick
            policy.maximumRetryAfter = 0.1
            let session = transport.makeSession(interceptor: policy)
            let request = session.request(server.url("/fault/retry-after/long?times=1&seconds=3600")).validate()
            // Without the cap this would wait an hour; the bound turns that into a failure.
            let answer = await value(within: hangLimit) { try? await request.serializingDecodable(Attempts.self).value }
            // Where it stood, if it hung (a 30 s bound was overrun at a full run's start, see `hangLimit`).
            let progress =
                "state \(request.state), retries \(request.retryCount), sent \(request.performedRequests.count), "
                + "metrics \(request.allMetrics.map { $0.statusCode.map(String.init) ?? "-" })"
            #expect(answer??.attempts == 2, "\(progress)")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func connectionLostPolicyRetriesOnlyLostConnections(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: ConnectionLostRetryPolicy(exponentialBackoffScale: 0.01))
            let dropped = try await session.request(server.url("/fault/flaky/cl-drop?times=1&fault=drop"))
                .serializingDecodable(Attempts.self).value
            #expect(dropped.attempts == 2)
            let failed = await session.request(server.url("/fault/flaky/cl-503?times=1&status=503")).validate()
                .serializingData().result.failure
            #expect(failed?.responseCode == 503)
            #expect(server.attempts(forKey: "cl-503") == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func infiniteSettingsRetryWithoutTrapping(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let policy = RetryPolicy(
                retryLimit: 3,
                exponentialBackoffBase: .infinity,
                exponentialBackoffScale: .nan,
                maximumBackoff: .nan,
                maximumRetryAfter: .infinity
            )
            let session = transport.makeSession(interceptor: policy)
            // NaN cap: no wait; every retry is made at once.
            let answer = try await session.request(server.url("/fault/flaky/nonfinite?times=3&status=503"))
                .validate().serializingDecodable(Attempts.self).value
            #expect(answer.attempts == 4)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anEnormousRetryAfterDoesNotTrap(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            var policy = RetryPolicy(retryableHTTPStatusCodes: [200])
            policy.maximumRetryAfter = .infinity
            // The retry would wait about 31 years; the deadline turns that into a prompt failure.
            let session = transport.makeSession({ $0.requestDeadline = 60 }, interceptor: policy)
            for seconds in ["99999999999999999999", String(repeating: "9", count: 400)] {
                let request = session.request(server.url("/response-headers?Retry-After=\(seconds)"))
                    .validate(statusCode: [201])
                let result = await value(within: hangLimit) { await request.serializingData().result }
                #expect(result?.failure?.responseCode == 200, "fails with its own error, at once")
                #expect(request.retryCount == 0)
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func retryAfterIsReadFromTheHeadWithoutBuildingAnHTTPURLResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // A backoff of 5 s without jitter: a decided delay of 0 can only come from Retry-After.
            let retrier = HeadCheckingRetrier(policy: RetryPolicy(exponentialBackoffScale: 5, usesJitter: false))
            let session = transport.makeSession(interceptor: retrier)
            let answer = try await session.request(server.url("/fault/retry-after/head?times=1&seconds=0"))
                .validate().serializingDecodable(Attempts.self).value
            #expect(answer.attempts == 2)
            let decisions = retrier.decisions.withLock { $0 }
            #expect(decisions.map(\.status) == [503])
            #expect(decisions.map(\.delay) == [0])
            // URLSession hands over a ready HTTPURLResponse; over AsyncHTTPClient nothing built one.
            #expect(decisions.map(\.built) == [transport == .urlSession])
            await session.invalidate()
        }
    }
}
