import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The queue the operations below run their override points on.
private let overrideQueue = DispatchQueue(label: "test.operation")
private let overrideQueueKey = DispatchSpecificKey<Bool>()

/// Adds a header before each attempt and rejects response heads that are not JSON, and records
/// whether each override point ran on the operation's queue.
private final class JSONOnlyOperation: RequestOperation, @unchecked Sendable {
    let calls = Mutex<[String: Bool]>([:])

    private func record(_ name: String) {
        let onQueue = DispatchQueue.getSpecific(key: overrideQueueKey) == true
        calls.withLock { $0[name] = onQueue }
    }

    override func prepare(
        _ urlRequest: URLRequest,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        record("prepare")
        var urlRequest = urlRequest
        urlRequest.setValue("prepared", forHTTPHeaderField: "X-Operation")
        completion(.success(urlRequest))
    }

    override func validateResponseHead(_ response: HTTPURLResponse) throws {
        record("validateResponseHead")
        guard response.mimeType == "application/json" else { throw NotJSON() }
    }

    override func computeRetryInfo(
        for request: Request,
        dueTo error: CourierError,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        record("computeRetryInfo")
        super.computeRetryInfo(for: request, dueTo: error, completion: completion)
    }
}

private struct NotJSON: Error, Equatable {}

/// Fails every attempt before it is sent.
private final class FailingOperation: RequestOperation, @unchecked Sendable {
    override func prepare(
        _ urlRequest: URLRequest,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(.failure(NotJSON()))
    }
}

/// Waits until every operation of `queue` has finished, without blocking a thread.
private func finish(_ queue: OperationQueue) async {
    await withCheckedContinuation { continuation in
        queue.addBarrierBlock { continuation.resume() }
    }
}

@Suite struct RequestOperationTests {
    private static func request(_ url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.timeoutInterval = 30
        return request
    }

    @Test(arguments: TransportKind.allCases)
    func operationsRunTheirRequestsAfterTheirDependencies(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let queue = OperationQueue(maxConcurrentOperationCount: 2, name: "test")
            let quick = RetryPolicy(exponentialBackoffScale: 0.01)
            let first = RequestOperation(session: session, request: Self.request(server.url("/get")))
            let second = RequestOperation(session: session, request: Self.request(server.url("/bytes/1000")))
            let last = RequestOperation(
                session: session,
                request: Self.request(server.url("/fault/flaky/op?times=1&status=503")),
                retryPolicy: quick
            )
            last.addDependency(first)
            last.addDependency(second)
            for operation in [last, first, second] { queue.addOperation(operation) }
            await finish(queue)
            #expect(first.isFinished && second.isFinished && last.isFinished)
            #expect(first.response?.value??.isEmpty == false)
            #expect(second.response?.value??.count == 1000)
            #expect(last.response?.response?.statusCode == 200, "the 503 failed validation and was retried")
            #expect(last.response?.value??.isEmpty == false)
            // It ran only once both dependencies had finished.
            let endDates = [first, second].compactMap { $0.response?.metrics?.endDate }
            let dependenciesEnded = try #require(endDates.max())
            let lastStarted = try #require(last.response?.metrics?.startDate)
            #expect(lastStarted >= dependenciesEnded)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theDefaultRetryPolicyRetriesAFailedHead(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let queue = OperationQueue()
            overrideQueue.setSpecific(key: overrideQueueKey, value: true)
            let operation = JSONOnlyOperation(
                session: session,
                request: Self.request(server.url("/fault/flaky/op2?times=1&status=503")),
                callbackQueue: overrideQueue,
                retryPolicy: RetryPolicy(exponentialBackoffScale: 0.01)
            )
            queue.addOperation(operation)
            await finish(queue)
            let calls = operation.calls.withLock { $0 }
            #expect(calls == ["prepare": true, "validateResponseHead": true, "computeRetryInfo": true])
            // The 503 comes as JSON, so the head passes; validation fails it and the policy retries.
            #expect(operation.response?.response?.statusCode == 200)
            #expect(operation.response?.request?.value(forHTTPHeaderField: "X-Operation") == "prepared")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRejectedHeadStopsTheTransferEarly(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let queue = OperationQueue()
            // 64 MiB of octets: rejected on its head, long before the body could arrive.
            let operation = JSONOnlyOperation(session: session, request: Self.request(server.url("/bytes/67108864")))
            queue.addOperation(operation)
            await finish(queue)
            let error = operation.response?.error
            #expect(error?.kind == .responseValidationFailed)
            #expect(error?.underlyingError as? NotJSON == NotJSON())
            #expect((operation.response?.data?.count ?? 0) < 67_108_864)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFailedPreparationFailsTheOperation(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let queue = OperationQueue()
            let operation = FailingOperation(session: session, request: Self.request(server.url("/get")))
            queue.addOperation(operation)
            await finish(queue)
            #expect(operation.response?.error?.kind == .requestAdaptationFailed)
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingTheQueueCancelsRequestsInFlightAndPending(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let queue = OperationQueue(maxConcurrentOperationCount: 1)
            let hanging = RequestOperation(
                session: session,
                request: Self.request(server.url("/fault/hang?seconds=60"))
            )
            let pending = RequestOperation(session: session, request: Self.request(server.url("/get")))
            queue.addOperation(hanging)
            queue.addOperation(pending)
            try await server.waitForRequests(1)
            queue.cancelAllOperations()
            let ended: Bool? = await value(within: hangLimit) {
                await finish(queue)
                return true
            }
            #expect(ended == true, "the hanging request was cancelled, not waited for")
            #expect(hanging.isFinished && pending.isFinished)
            #expect(hanging.response?.error?.isExplicitlyCancelledError == true)
            // Cancelled before it started, or (if the queue started it while cancelling) with its request.
            #expect(pending.response == nil || pending.response?.error?.isExplicitlyCancelledError == true)
            await session.invalidate()
        }
    }

    @Test func queuesAreConfiguredInOneCall() {
        let queue = OperationQueue(
            qualityOfService: .utility,
            maxConcurrentOperationCount: 3,
            name: "courier",
            startSuspended: true
        )
        #expect(queue.qualityOfService == .utility)
        #expect(queue.maxConcurrentOperationCount == 3)
        #expect(queue.name == "courier")
        #expect(queue.isSuspended)
    }
}
