import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Names the task a validator closure runs in: a task-local value is visible only there.
enum AwaitingTask {
    @TaskLocal static var name: String?
}

/// The task names a validator saw, in order.
typealias SeenNames = TestLock<[String?]>

extension TestLock<[String?]> {
    /// Records the name of the task this runs in (`nil` outside any named one).
    func record() {
        let name = AwaitingTask.name
        withLock { $0.append(name) }
    }

    var all: [String?] { withLock { $0 } }
}

@Suite struct ValidationTests {
    /// The async API runs a validator closure in the awaiting task, not on a queue between the
    /// transport and the caller; a completion handler's request runs it on its serialization queue.
    @Test(arguments: TransportKind.allCases)
    func aValidatorClosureRunsInTheTaskThatAwaitsTheResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let seen = SeenNames([])
            // The server answers after 1 s. The task claims the response within microseconds of
            // starting the request, with no suspension in between: it has long begun awaiting.
            let request = session.request(server.url("/delay/1")).validate { _, response, _ in
                seen.record()
                return response.statusCode == 200 ? .success(()) : .failure(URLError(.badServerResponse))
            }
            let data = try await AwaitingTask.$name.withValue("awaiter") {
                try await request.serializingData().value
            }
            #expect(!data.isEmpty)
            #expect(seen.all == ["awaiter"])

            let handlerSeen = SeenNames([])
            let handled = await AwaitingTask.$name.withValue("caller") {
                await withCheckedContinuation { continuation in
                    session.request(server.url("/get"))
                        .validate { _, _, _ in
                            handlerSeen.record()
                            return .success(())
                        }
                        .responseData { continuation.resume(returning: $0.error == nil) }
                }
            }
            #expect(handled)
            #expect(handlerSeen.all == [nil], "a handler's validation runs on the serialization queue")
            await session.invalidate()
        }
    }

    /// A failed validation in the awaiting task retries, and the next attempt's validation runs
    /// there too; the caller still gets one response.
    @Test(arguments: TransportKind.allCases)
    func aRetryAfterAFailedValidationIsValidatedInTheAwaitingTaskToo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(
                interceptor: Retrier { request, _, _ in request.retryCount == 0 ? .retry : .doNotRetry }
            )
            let seen = SeenNames([])
            let key = "validate-in-task-\(transport)"
            let request = session.request(server.url("/fault/flaky/\(key)?times=1&status=503"))
                .validate { _, response, _ in
                    seen.record()
                    return response.statusCode == 200 ? .success(()) : .failure(URLError(.badServerResponse))
                }
            let result = await AwaitingTask.$name.withValue("awaiter") { await request.serializingData().result }
            #expect((try? result.get()) != nil)
            #expect(request.retryCount == 1)
            #expect(seen.all.count == 2)
            // The first attempt may finish before the task begins waiting (then its validation
            // runs on the serialization queue); the retry's always finds it waiting.
            #expect(seen.all.last == "awaiter")
            await session.invalidate()
        }
    }
}
