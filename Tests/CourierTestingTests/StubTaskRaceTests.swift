import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The stub's own guarantees under races, with no session: every task completes exactly once,
/// calls never overlap, and a cancel that wins is the completion.
@Suite struct StubTaskRaceTests {
    @Test func cancelRacingTheScriptCompletesEachTaskExactlyOnce() async throws {
        let total = 5000
        let transport = StubTransport()
        let gates = (0..<total).map { _ in StubGate() }
        transport.respond { request in
            guard let index = Int(request.url?.lastPathComponent ?? "") else { return nil }
            return StubResponse.status(200).body("a").wait(for: gates[index]).body("b")
        }
        let handlers = (0..<total).map { _ in RecordingHandler() }
        let finished: Void? = await value(within: 60) {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<total {
                    group.addTask {
                        guard let url = URL(string: "https://example.com/\(index)") else { return }
                        let task = transport.makeTask(
                            for: URLRequest(url: url),
                            body: nil,
                            eventHandler: handlers[index]
                        )
                        task.resume()
                        await gates[index].waitForArrivals()
                        // Cancel, open the gate, suspend and resume from different threads at once.
                        DispatchQueue.concurrentPerform(iterations: 4) { lane in
                            switch (lane + index) % 4 {
                            case 0: task.cancel()
                            case 1: gates[index].open()
                            case 2: task.suspend()
                            default: task.resume()
                            }
                        }
                        task.resume()
                        await handlers[index].waitForCompletion()
                    }
                }
            }
        }
        try #require(finished != nil, "a task never completed")
        var cancelled = 0
        for handler in handlers {
            let events = handler.events
            #expect(handler.completions == 1)
            #expect(handler.overlaps == 0)
            #expect(Array(events.prefix(2)) == [.head(200), .body(Data("a".utf8))])
            switch events.last {
            case .completion(.cancelled): cancelled += 1
            case .completion(nil): #expect(events.count == 4, "a task that was not cancelled plays its whole script")
            default: Issue.record("unexpected end: \(events)")
            }
        }
        // Not asserted beyond sanity: which side wins is the race.
        #expect(cancelled <= total)
    }

    @Test func suspendAndResumeRacingNeverLoseOrReorderEvents() async throws {
        let total = 2000
        let pieces = (0..<8).map { Data("\($0)".utf8) }
        var script = StubResponse.status(200)
        for (offset, piece) in pieces.enumerated() {
            script = offset.isMultiple(of: 3) ? script.delay(.microseconds(20)).body(piece) : script.body(piece)
        }
        let transport = StubTransport(unmatched: script)
        let handlers = (0..<total).map { _ in RecordingHandler() }
        let finished: Void? = await value(within: 60) {
            await withTaskGroup(of: Void.self) { group in
                for handler in handlers {
                    group.addTask {
                        guard let url = URL(string: "https://example.com/") else { return }
                        let task = transport.makeTask(for: URLRequest(url: url), body: nil, eventHandler: handler)
                        task.resume()
                        DispatchQueue.concurrentPerform(iterations: 6) { lane in
                            if Bool.random() || lane == 0 { task.suspend() } else { task.resume() }
                        }
                        task.resume()
                        await handler.waitForCompletion()
                    }
                }
            }
        }
        try #require(finished != nil, "a task stayed suspended")
        let expected = [RecordingHandler.Event.head(200)] + pieces.map { .body($0) } + [.completion(nil)]
        for handler in handlers {
            #expect(handler.events == expected)
            #expect(handler.overlaps == 0)
        }
    }
}
