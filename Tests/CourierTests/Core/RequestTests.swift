import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Counts calls, so a test can check a handler ran exactly once.
final class CallCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

@Suite struct RequestTests {
    @Test(arguments: TransportKind.allCases)
    func cancellingBeforeResumeFinishesWithExplicitlyCancelled(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.startRequestsImmediately = false }
            let request = session.request(server.url("/get"))
            #expect(request.state == .initialized)
            request.cancel()
            let result = await request.serializingData().result
            guard case .failure(let error) = result else {
                Issue.record("a cancelled request never succeeds")
                return
            }
            #expect(error.isExplicitlyCancelledError)
            #expect(request.state == .cancelled)
            #expect(request.performedRequests.isEmpty, "nothing went on the wire")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingAHangingRequestEndsItPromptly(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/fault/hang"))
            let answers = HandlerResponses(of: request)
            try await server.waitForRequests(1)
            request.cancel()
            let response = await answers.first()
            #expect(response?.error?.isExplicitlyCancelledError == true)
            #expect(answers.calls.value == 1)
            #expect(request.state == .cancelled)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingTheSwiftTaskCancelsTheRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/fault/hang"))
            let dataTask = request.serializingData()
            let waiter = Task { await dataTask.result }
            try await server.waitForRequests(1)
            waiter.cancel()
            let result = await waiter.value
            guard case .failure(let error) = result else {
                Issue.record("cancelled")
                return
            }
            #expect(error.isExplicitlyCancelledError)
            #expect(request.isCancelled)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func startRequestsImmediatelyOffWaitsForResume(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.startRequestsImmediately = false }
            let request = session.request(server.url("/get"))
            let task = request.serializingData()
            // Nothing may reach the server before resume().
            await #expect(throws: TestServerError.timedOut) {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            #expect(request.state == .initialized)
            request.resume()
            let data = try await task.value
            #expect(!data.isEmpty)
            #expect(request.state == .finished)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func suspendAndResumeCompleteTheTransfer(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // Paced over 8 s and paused from the first progress update, on a queue of its own: a
            // test task on a loaded machine (2 cores, the whole suite at once) can wake seconds
            // late, after the transfer has ended.
            let request = session.request(server.url("/range/200000?chunk_size=4000&duration=8"))
            let states = Mutex<[Request.State]>([])
            request.downloadProgress(queue: DispatchQueue(label: "test.progress")) { [weak request] progress in
                guard let request, progress.completedUnitCount > 0, states.withLock({ $0.isEmpty }) else { return }
                request.suspend()
                let suspended = request.state
                request.resume()
                states.withLock { $0 = [suspended, request.state] }
            }
            let data = try await request.serializingData().value
            let seen = states.withLock { $0 }
            #expect(seen.first == .suspended)
            #expect(seen.last == .resumed)
            #expect(data.count == 200_000)
            #expect(data.prefix(3) == Data("abc".utf8))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func racingSuspendAndResumeLeaveTheTransferAsTheStateSays(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/range/100000?chunk_size=2000&duration=2"))
            let task = request.serializingData()
            try await server.waitForRequests(1)
            // If a suspend() reached the transport after a later resume(), the transfer would stay
            // paused while the request says resumed, and never finish.
            DispatchQueue.concurrentPerform(iterations: 2000) { index in
                if index.isMultiple(of: 2) { request.suspend() } else { request.resume() }
            }
            request.resume()
            let data = await value(within: hangLimit) { try? await task.value }
            #expect(data??.count == 100_000)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func everyHandlerRunsExactlyOnceWhenCancelRacesCompletion(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let total = 1000
            let counter = CallCounter()
            let requests = (0..<total).map { index in
                session.request(server.url(index.isMultiple(of: 3) ? "/fault/hang" : "/bytes/\(index % 50)"))
            }
            await withTaskGroup(of: Void.self) { group in
                for (index, request) in requests.enumerated() {
                    group.addTask {
                        await withCheckedContinuation { continuation in
                            request.response { _ in
                                counter.increment()
                                continuation.resume()
                            }
                            if index.isMultiple(of: 2) || index.isMultiple(of: 3) {
                                // Cancel at a random point: before, during or after the transfer.
                                DispatchQueue.global().asyncAfter(
                                    deadline: .now() + .microseconds(Int.random(in: 0...3000))
                                ) {
                                    request.cancel()
                                }
                            }
                        }
                    }
                }
            }
            #expect(counter.value == total)
            for request in requests {
                #expect(request.state == .finished || request.state == .cancelled, "no request is left unfinished")
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func everyHandlerRunsExactlyOnceWhenCancelRacesRetries(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // Retries forever, sometimes after a short delay, so cancel lands in every phase:
            // during an attempt, while the retrier decides, during the delay, at the next start.
            let session = transport.makeSession(
                { $0.retryBudget = nil },
                interceptor: Retrier { request, _, _ in
                    request.retryCount.isMultiple(of: 2) ? .retry : .retryWithDelay(0.001)
                }
            )
            let total = 300
            let counter = CallCounter()
            let requests = (0..<total).map { _ in session.request(server.url("/status/503")).validate() }
            await withTaskGroup(of: Void.self) { group in
                for request in requests {
                    group.addTask {
                        await withCheckedContinuation { continuation in
                            request.response { response in
                                #expect(response.error?.isExplicitlyCancelledError == true)
                                counter.increment()
                                continuation.resume()
                            }
                            DispatchQueue.global().asyncAfter(
                                deadline: .now() + .microseconds(Int.random(in: 0...20000))
                            ) {
                                request.cancel()
                            }
                        }
                    }
                }
            }
            #expect(counter.value == total)
            for request in requests {
                #expect(request.state == .cancelled, "no request is left retrying")
            }
            await session.invalidate()
        }
    }

    @Test func cURLDescriptionRedactsCredentials() async throws {
        try await TestServer.withRunningServer { server in
            let session = TransportKind.urlSession.makeSession()
            let request = session.request(
                server.url("/post"),
                method: .post,
                parameters: ["a": "1"],
                headers: [.authorization(bearerToken: "top-secret")]
            )
            _ = await request.serializingData().result
            let description = request.cURLDescription()
            #expect(!description.contains("top-secret"))
            #expect(description.contains("Authorization: ***"))
            #expect(description.contains(#"-X "POST""#))
            #expect(description.contains(#"-d "a=1""#))
            #expect(request.cURLDescription(includingCredentials: true).contains("Bearer top-secret"))
            await session.invalidate()
        }
    }

    @Test func requestsAreIdentifiedByID() {
        let session = TransportKind.urlSession.makeSession()
        let first = session.request("http://127.0.0.1:9/a")
        let second = session.request("http://127.0.0.1:9/a")
        #expect(first != second)
        #expect(first == first)
        #expect(Set([first, second, first]).count == 2)
        first.cancel()
        second.cancel()
    }
}
