import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's requests under races, on the stub transport: no sockets, so thousands of runs
/// take a second or two, and a gate puts each race exactly where the test wants it. (The socket
/// versions stay in `CourierTests/Core/RequestTests.swift`.)
@Suite struct RequestRaceTests {
    /// When the cancel comes, relative to the attempt.
    private enum CancelPoint: CaseIterable {
        /// Right after the request starts: before its attempt can complete (its gate is closed).
        case atStart
        /// Racing the gate's opening (from another thread, a random moment after it) once the head
        /// has arrived.
        case racingTheCompletion
        /// After the response handler ran: too late to change anything.
        case afterTheResponse
        /// After a random delay, while the attempt plays a script with pauses.
        case atRandom
    }

    /// The outcome one request reported, and the state it was left in.
    private struct Outcome: Sendable {
        let point: CancelPoint
        let cancelled: Bool
        let error: CourierError?
        let data: Data?
        let expected: Data
        let state: Request.State
    }

    @Test func everyHandlerAndAwaiterRunsExactlyOnceWhenCancelRacesCompletion() async throws {
        let total = 2000
        let transport = StubTransport()
        let gates = (0..<total).map { _ in StubGate() }
        transport.respond { request in
            guard let index = Int(request.url?.lastPathComponent ?? "") else { return nil }
            let script = StubResponse.status(200, headers: ["Content-Type": "text/plain"]).body("\(index)-")
            switch index % 4 {
            case 3: return script.delay(.microseconds(Int64.random(in: 0...300))).body("end")
            default: return script.wait(for: gates[index]).body("end")
            }
        }
        let session = Session(transport: transport)
        let handlerCalls = (0..<total).map { _ in CallCounter() }
        let outcomes = await value(within: 60) {
            await withTaskGroup(of: Outcome.self) { group in
                for index in 0..<total {
                    group.addTask {
                        await Self.raceCancel(
                            index: index,
                            session: session,
                            gate: gates[index],
                            calls: handlerCalls[index]
                        )
                    }
                }
                var outcomes: [Outcome] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
        }
        let all = try #require(outcomes, "a request never answered")
        #expect(all.count == total)
        for calls in handlerCalls { #expect(calls.value <= 1) }
        // Handlers were used for half the requests (the other half awaited); each ran once.
        #expect(handlerCalls.reduce(0) { $0 + $1.value } == total / 2)
        for outcome in all {
            if outcome.cancelled {
                #expect(outcome.error?.isExplicitlyCancelledError == true)
                #expect(outcome.state == .cancelled)
                #expect(outcome.point != .afterTheResponse, "a finished request cannot be cancelled")
            } else {
                #expect(outcome.error == nil)
                #expect(outcome.data == outcome.expected, "a request not cancelled gets the scripted body")
                #expect(outcome.state == .finished)
                #expect(outcome.point != .atStart, "a request cancelled before its attempt can end is cancelled")
            }
        }
        await session.invalidate()
    }

    /// Runs request `index` and cancels it at the point its index picks.
    private static func raceCancel(index: Int, session: Session, gate: StubGate, calls: CallCounter) async -> Outcome {
        let point = CancelPoint.allCases[index % 4]
        let request = session.request("https://example.com/\(index)")
        let usesHandler = (index / 4).isMultiple(of: 2)
        let response: DataResponse<Data, CourierError> = await withCheckedContinuation { continuation in
            let answer = { @Sendable (response: DataResponse<Data, CourierError>) in
                continuation.resume(returning: response)
            }
            if usesHandler {
                request.responseData { response in
                    calls.increment()
                    answer(response)
                }
            } else {
                Task { answer(await request.serializingData().response) }
            }
            switch point {
            case .atStart:
                request.cancel()
                gate.open()
            case .racingTheCompletion:
                Task {
                    await gate.waitForArrivals()
                    // The gate opens at once; the cancel follows a random moment later, so that it
                    // lands before, during or after the completion's delivery and processing.
                    let jitter = DispatchTimeInterval.microseconds(Int.random(in: 0...200))
                    DispatchQueue.global().asyncAfter(deadline: .now() + jitter) { request.cancel() }
                    gate.open()
                }
            case .afterTheResponse:
                gate.open()
            case .atRandom:
                DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...300))) {
                    request.cancel()
                }
            }
        }
        if point == .afterTheResponse { request.cancel() }
        return Outcome(
            point: point,
            cancelled: response.error?.isExplicitlyCancelledError == true,
            error: response.error,
            data: response.data,
            expected: Data("\(index)-end".utf8),
            state: request.state
        )
    }

    @Test func everyHandlerRunsExactlyOnceWhenCancelRacesRetries() async throws {
        let total = 1000
        // Every attempt fails validation; the retrier retries forever, sometimes after a short
        // delay, so cancel lands in every phase: during an attempt, while the retrier decides,
        // during the delay, at the next start.
        let transport = StubTransport(unmatched: StubResponse.status(503).body("busy"))
        let attempts = CallCounter()
        let session = Session(
            configuration: Session.Configuration { $0.retryBudget = nil },
            transport: transport,
            interceptor: Retrier { request, _, _ in
                attempts.increment()
                return request.retryCount.isMultiple(of: 2) ? .retry : .retryWithDelay(0.0002)
            }
        )
        let counter = CallCounter()
        let requests = (0..<total).map { index in session.request("https://example.com/\(index)").validate() }
        let finished: Void? = await value(within: 60) {
            await withTaskGroup(of: Void.self) { group in
                for (index, request) in requests.enumerated() {
                    group.addTask {
                        let cancelAfter = DispatchTimeInterval.microseconds(Int.random(in: 0...2000))
                        if index.isMultiple(of: 2) {
                            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                                request.response { response in
                                    #expect(response.error?.isExplicitlyCancelledError == true)
                                    counter.increment()
                                    continuation.resume()
                                }
                                DispatchQueue.global().asyncAfter(deadline: .now() + cancelAfter) { request.cancel() }
                            }
                        } else {
                            DispatchQueue.global().asyncAfter(deadline: .now() + cancelAfter) { request.cancel() }
                            let result = await request.serializingData().result
                            #expect(result.failure?.isExplicitlyCancelledError == true)
                            counter.increment()
                        }
                    }
                }
            }
        }
        try #require(finished != nil, "a request kept retrying after it was cancelled")
        #expect(counter.value == total)
        #expect(attempts.value > 0, "the retrier ran")
        for request in requests {
            #expect(request.state == .cancelled, "no request is left retrying")
        }
        await session.invalidate()
    }

    /// Validator closures of awaited requests run in the awaiting task: once per completed
    /// attempt, whatever a cancel races with (a validation handed over, pending, or running), and
    /// every awaiter of the same task gets the one response.
    @Test func awaitedValidatorClosuresRunOncePerAttemptWhateverACancelRacesWith() async throws {
        let total = 1000
        let transport = StubTransport(unmatched: StubResponse.status(503).body("busy"))
        let session = Session(
            configuration: Session.Configuration { $0.retryBudget = nil },
            transport: transport,
            interceptor: Retrier { request, _, _ in request.retryCount < 3 ? .retry : .doNotRetry }
        )
        let checked: Int? = await value(within: 60) {
            await withTaskGroup(of: Bool.self) { group in
                for index in 0..<total {
                    group.addTask { await Self.raceValidation(index: index, session: session) }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(checked == total, "an awaiter never returned, or saw something impossible")
        await session.invalidate()
    }

    /// One request of ``awaitedValidatorClosuresRunOncePerAttemptWhateverACancelRacesWith()``:
    /// `true` when everything it saw holds.
    private static func raceValidation(index: Int, session: Session) async -> Bool {
        let validations = CallCounter()
        let request = session.request("https://example.com/\(index)").validate { _, response, _ in
            validations.increment()
            return response.statusCode < 300 ? .success(()) : .failure(URLError(.badServerResponse))
        }
        let task = request.serializingData()
        let cancels = index % 3 != 0
        if cancels {
            let after = DispatchTimeInterval.microseconds(Int.random(in: 0...1500))
            DispatchQueue.global().asyncAfter(deadline: .now() + after) { request.cancel() }
        }
        let awaiters = index.isMultiple(of: 5) ? 2 : 1
        let results = await withTaskGroup(of: Result<Data, CourierError>.self) { group in
            for _ in 0..<awaiters { group.addTask { await task.result } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let errors = results.map(\.failure)
        let attempts = request.allMetrics.count
        var holds = results.count == awaiters && errors.allSatisfy { $0 != nil }
        holds = holds && Set(errors.map { $0?.kind }).count == 1
        if request.state == .cancelled {
            holds = holds && validations.value <= attempts
        } else {
            // Four attempts (three retries), each validated exactly once.
            holds = holds && attempts == 4 && validations.value == 4
        }
        if !holds {
            Issue.record(
                "request \(index): \(awaiters) awaiters, \(attempts) attempts, \(validations.value) validations, state \(request.state), errors \(errors)"
            )
        }
        return holds
    }

    @Test func racingSuspendAndResumeLeaveTheTransferAsTheStateSays() async throws {
        let total = 2000
        var script = StubResponse.status(200)
        for piece in 0..<10 {
            script =
                piece.isMultiple(of: 3) ? script.delay(.microseconds(30)).body("\(piece)") : script.body("\(piece)")
        }
        let transport = StubTransport(unmatched: script)
        let session = Session(transport: transport)
        let counter = CallCounter()
        let results = await value(within: 60) {
            await withTaskGroup(of: Data?.self) { group in
                for index in 0..<total {
                    group.addTask {
                        let request = session.request("https://example.com/\(index)")
                        let task = Task { try? await request.serializingData().value }
                        // If a suspend() reached the transport after a later resume(), the
                        // transfer would stay paused while the request says resumed.
                        DispatchQueue.concurrentPerform(iterations: 6) { lane in
                            if (lane + index).isMultiple(of: 2) { request.suspend() } else { request.resume() }
                        }
                        request.resume()
                        let data = await task.value
                        counter.increment()
                        #expect(request.state == .finished)
                        return data
                    }
                }
                var results: [Data?] = []
                for await data in group { results.append(data) }
                return results
            }
        }
        let all = try #require(results, "a request stayed suspended")
        #expect(counter.value == total)
        for data in all { #expect(data == Data("0123456789".utf8)) }
        await session.invalidate()
    }

    @Test func aMonitorAddedWhileTheRequestRunsHearsAnUnbrokenTail() async throws {
        let total = 2000
        let transport = StubTransport(unmatched: StubResponse.status(200).delay(.microseconds(50)).body("done"))
        let session = Session(transport: transport)
        let everything = ["resumed", "urlRequest", "response", "finished", "parsed"]
        let heard = await value(within: 60) {
            await withTaskGroup(of: [String].self) { group in
                for index in 0..<total {
                    group.addTask {
                        let monitor = TailMonitor()
                        let request = session.request("https://example.com/\(index)")
                        // Added from another thread at a random moment of the request's life: after
                        // a random number of turns of the task pool, which the request needs too.
                        let adding = Task.detached {
                            for _ in 0..<Int.random(in: 0...40) { await Task.yield() }
                            request.eventMonitor(monitor)
                        }
                        _ = await request.serializingData().result
                        await adding.value
                        // What was told before the awaiter resumed is on the monitor's queue by now.
                        return monitor.queue.sync { monitor.names }
                    }
                }
                var heard: [[String]] = []
                for await names in group { heard.append(names) }
                return heard
            }
        }
        let all = try #require(heard, "a request never answered")
        #expect(all.count == total)
        for names in all {
            #expect(everything.suffix(names.count).elementsEqual(names), "heard \(names), not a tail")
        }
        // The moment varies enough that monitors came at different points of the request's life.
        let lengths = Set(all.map(\.count))
        #expect(lengths.count >= 2, "every monitor heard \(lengths)")
        await session.invalidate()
    }
}

/// Notes the names of the events it hears, on its queue.
private final class TailMonitor: EventMonitor, @unchecked Sendable {
    // @unchecked Sendable: `names` is touched on `queue` only.
    let queue = DispatchQueue(label: "test.tailMonitor")
    var names: [String] = []

    func requestDidResume(_ request: Request) { names.append("resumed") }
    func requestDidFinish(_ request: Request) { names.append("finished") }
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { names.append("urlRequest") }
    func request(_ request: Request, didReceive head: ResponseHead) { names.append("response") }
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, CourierError>)
    {
        names.append("parsed")
    }
}
