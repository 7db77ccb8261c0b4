import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Custom requests run by a `CustomRequestDelegate` (Siesta's `RequestDelegate`): the delegate's
/// answer goes through validation, serializers, progress, monitors, cancellation and retry as a
/// server's would, with the guarantees the protocol lists. The session's transport is not used,
/// but each test still runs on a session of each kind.
@Suite struct CustomRequestTests {
    @Test(arguments: TransportKind.allCases)
    func theAnswerIsValidatedAndSerializedAsAServersWouldBe(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let log = DelegateLog()
        let request = session.request(
            using: ScriptedDelegate(log: log) { handler, _ in
                handler.broadcastResponse(.text("hello", status: 201))
            }
        )
        let response = await value(within: hangLimit) {
            await request.validate(statusCode: [201]).validate(contentType: ["text/plain"]).serializingString().response
        }
        #expect(response?.value == "hello")
        #expect(response?.response?.statusCode == 201)
        #expect(response?.metrics?.statusCode == 201)
        #expect(response?.metrics?.bytesReceived == 5)
        #expect(request.description == "scripted #0 (201)")
        #expect(request.cURLDescription() == "$ scripted #0")
        #expect(request.request?.url?.scheme == "courier-custom")
        #expect(log.starts.count == 1)
        #expect(log.cancels.count == 0)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func theFirstAnswerWinsAndALaterOneIsIgnoredAndReported(transport: TransportKind) async throws {
        let ignored = Mailbox<String>()
        let monitor = ClosureEventMonitor()
        monitor.requestDidIgnoreCustomResponse = { _, reason in ignored.put(reason) }
        let session = transport.makeSession(eventMonitors: [monitor])
        let taken = Mailbox<Bool>()
        let request = session.request(
            using: ScriptedDelegate { handler, _ in
                taken.put(handler.broadcastResponse(.text("first")))
                taken.put(handler.broadcastResponse(.text("second")))
                taken.put(handler.broadcastFailure(URLError(.timedOut)))
            }
        )
        let text = await value(within: hangLimit) { await request.serializingString().result }
        #expect(text?.success == "first")
        _ = await taken.value(at: 2)
        #expect(taken.values == [true, false, false])
        #expect(await ignored.value(at: 1) == "the operation had answered already")
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func anAnswerAfterACancelIsNeverDelivered(transport: TransportKind) async throws {
        let ignored = Mailbox<String>()
        let monitor = ClosureEventMonitor()
        monitor.requestDidIgnoreCustomResponse = { _, reason in ignored.put(reason) }
        let session = transport.makeSession(eventMonitors: [monitor])
        let log = DelegateLog()
        let request = session.request(using: ScriptedDelegate(log: log))
        request.resume()
        let handler = try #require(await log.starts.value(at: 0))
        #expect(!handler.willIgnore)
        request.cancel()
        #expect(handler.willIgnore)
        #expect(!handler.broadcastResponse(.text("late")))
        let result = await value(within: hangLimit) { await request.serializingString().result }
        #expect(result?.failure?.isExplicitlyCancelledError == true)
        #expect(await log.cancels.value(at: 0) == 0)
        #expect(await ignored.value(at: 0) == "the request was cancelled")
        // Cancelling again, after the end, does nothing: the delegate is told once.
        request.cancel()
        #expect(log.cancels.count == 1)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func anOperationThatNeverAnswersEndsWhenTheAwaitingTaskIsCancelled(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let log = DelegateLog()
        let request = session.request(using: ScriptedDelegate(log: log))
        let waiting = Task { await request.serializingData().result }
        _ = try #require(await log.starts.value(at: 0))
        waiting.cancel()
        let result = await value(within: hangLimit) { await waiting.value }
        #expect(result?.failure?.isExplicitlyCancelledError == true)
        #expect(await log.cancels.value(at: 0) == 0)
        #expect(log.cancels.count == 1)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func aCancelBeforeTheStartNeverStartsTheDelegate(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let log = DelegateLog()
        let request = session.request(using: ScriptedDelegate(log: log)).cancel()
        let result = await value(within: hangLimit) { await request.serializingData().result }
        #expect(result?.failure?.isExplicitlyCancelledError == true)
        #expect(log.starts.count == 0)
        #expect(log.cancels.count == 0)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func anAnswerWhileSuspendedWaitsForTheResume(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let log = DelegateLog()
        let request = session.request(using: ScriptedDelegate(log: log))
        request.resume()
        let handler = try #require(await log.starts.value(at: 0))
        request.suspend()
        #expect(handler.broadcastResponse(.text("held")))
        // Delivered synchronously when not held: nothing of it may have reached the request.
        #expect(request.response == nil)
        #expect(request.isSuspended)
        request.resume()
        let text = await value(within: hangLimit) { await request.serializingString().result }
        #expect(text?.success == "held")
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func progressNeverGoesBackAndEndsAtOne(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let script = Mutex((index: 0, values: [0.1, 0.3, 0.2, 0.5, -1, .nan, 0.4, 0.8, 0.7]))
        let handlerBox = Mailbox<CustomRequestCompletionHandler>()
        var delegate = ScriptedDelegate { handler, _ in handlerBox.put(handler) }
        delegate.interval = 0.001
        delegate.progress = {
            let (value, isLast) = script.withLock { script -> (Double, Bool) in
                let value = script.values[min(script.index, script.values.count - 1)]
                script.index += 1
                return (value, script.index == script.values.count)
            }
            if isLast {
                // Answers once the script has run out, from another thread.
                Task { await handlerBox.value(at: 0)?.broadcastResponse(.text("done")) }
            }
            return value
        }
        let seen = Mutex<[Double]>([])
        let request = session.request(using: delegate).downloadProgress { progress in
            seen.withLock { $0.append(progress.fractionCompleted) }
        }
        let text = await value(within: hangLimit) { await request.serializingString().result }
        #expect(text?.success == "done")
        // Handlers run on the callbacks queue, in order; one more block there waits for them all.
        await withCheckedContinuation { continuation in DispatchQueue.courierCallbacks.async { continuation.resume() } }
        let fractions = seen.withLock { $0 }
        #expect(fractions.count >= 2, "\(fractions)")
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
        #expect(fractions.last == 1)
        #expect(request.downloadProgress.fractionCompleted == 1)
        await session.invalidate()
    }

    /// A delegate that keeps its completion handler, as a long operation does, and says when it goes.
    private final class KeepingDelegate: CustomRequestDelegate, @unchecked Sendable {
        // `handler` is written once, in the start, and never read: it is only kept.
        private var handler: CustomRequestCompletionHandler?
        private let onDeinit: @Sendable () -> Void

        init(onDeinit: @escaping @Sendable () -> Void) {
            self.onDeinit = onDeinit
        }

        func startUnderlyingOperation(passingResponseTo completionHandler: CustomRequestCompletionHandler) {
            handler = completionHandler
            completionHandler.broadcastResponse(.text("kept"))
        }

        func cancelUnderlyingOperation() {}
        func repeated() -> any CustomRequestDelegate { KeepingDelegate(onDeinit: onDeinit) }

        deinit { onDeinit() }
    }

    @Test(arguments: TransportKind.allCases)
    func aDelegateKeepingItsHandlerGoesWithItsRequest(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let released = Mailbox<Bool>()
        do {
            let request = session.request(using: KeepingDelegate { released.put(true) })
            let text = await value(within: hangLimit) { await request.serializingString().result }
            #expect(text?.success == "kept")
        }
        // The handler holds the task; the task let go of the delegate when it answered.
        #expect(await released.value(at: 0) == true)
        await session.invalidate()
    }

    private struct OwnFailure: Error, Equatable {}

    @Test(arguments: TransportKind.allCases)
    func failuresReachTheRequestAsCourierErrors(transport: TransportKind) async throws {
        let session = transport.makeSession()
        func failure(answering error: any Error) async -> CourierError? {
            let request = session.request(using: ScriptedDelegate { handler, _ in handler.broadcastFailure(error) })
            return await value(within: hangLimit) { await request.serializingData().result }?.failure
        }
        let own = await failure(answering: OwnFailure())
        #expect(own?.kind == .customRequestFailed)
        #expect(own?.underlyingError as? OwnFailure == OwnFailure())
        let network = await failure(answering: URLError(.networkConnectionLost))
        #expect(network?.kind == .transportFailed)
        #expect((network?.underlyingError as? URLError)?.code == .networkConnectionLost)
        let courier = await failure(answering: CourierError.bodyTooLarge(limit: 3))
        #expect(courier?.kind == .bodyTooLarge)
        let badStatus = session.request(
            using: ScriptedDelegate { handler, _ in
                handler.broadcastResponse(CustomResponse(statusCode: 7))
            }
        )
        let invalid = await value(within: hangLimit) { await badStatus.serializingData().result }
        #expect(invalid?.failure?.kind == .invalidResponse)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func aRetryRunsARepeatedDelegate(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let log = DelegateLog()
        let request = session.request(
            using: ScriptedDelegate(log: log) { handler, index in
                if index == 0 {
                    handler.broadcastFailure(URLError(.networkConnectionLost))
                } else {
                    handler.broadcastResponse(.text("attempt \(index)"))
                }
            },
            interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.001, usesJitter: false)
        )
        let text = await value(within: hangLimit) { await request.serializingString().result }
        #expect(text?.success == "attempt 1")
        #expect(request.retryCount == 1)
        #expect(log.starts.count == 2)
        #expect(log.repeats.withLock { $0 } == 1)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func aNonIdempotentOperationIsNotRetriedUnlessAsked(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let log = DelegateLog()
        var post = URLRequest(url: URL(string: "https://example.org/orders")!)
        post.httpMethod = "POST"
        let request = session.request(
            using: ScriptedDelegate(log: log, request: post) { handler, _ in
                handler.broadcastFailure(URLError(.networkConnectionLost))
            },
            interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.001, usesJitter: false)
        )
        let result = await value(within: hangLimit) { await request.serializingData().result }
        #expect(result?.failure?.kind == .transportFailed)
        #expect(log.starts.count == 1)
        #expect(request.request?.httpMethod == "POST")
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func aRepeatedCustomRequestRunsAFreshDelegateWithoutTheOldHandlers(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let log = DelegateLog()
        let first = session.request(
            using: ScriptedDelegate(log: log) { handler, index in
                handler.broadcastResponse(.text("run \(index)"))
            }
        )
        let firstCalls = Mutex(0)
        let firstText = await value(within: hangLimit) {
            await first.validate { _, _, _ in
                firstCalls.withLock { $0 += 1 }
                return .success(())
            }.serializingString().result
        }
        #expect(firstText?.success == "run 0")
        let again = first.repeated()
        #expect(again.isInitialized)
        #expect(again.id != first.id)
        let againText = await value(within: hangLimit) { await again.serializingString().result }
        #expect(againText?.success == "run 1")
        #expect(firstCalls.withLock { $0 } == 1, "the first request's validator ran for its repeat")
        await session.invalidate()
    }
}
