import Courier
import Foundation
import Testing

@testable import CourierTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Feeds the stub task's machine events and checks its actions, with no threads or clock.
@Suite struct StubTaskStateMachineTests {
    private typealias Machine = StubTask.StateMachine
    private static let url = URL(fileURLWithPath: "/item")
    private let now = Date(timeIntervalSince1970: 1000)

    private func machine(_ response: StubResponse, bodyLength: Int64? = nil) -> Machine {
        Machine(url: Self.url, response: response, bodyLength: bodyLength)
    }

    /// A short name for an action, to compare.
    private func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: return "none"
        case .deliver(.head(let head)): return "head \(head.statusCode)"
        case .deliver(.body(let data)): return "body \(data.count)"
        case .deliver(.uploadProgress(let sent, let expected)): return "sent \(sent)/\(expected ?? -1)"
        case .deliver(.completion(let error, _)): return "complete \(error.map { "\($0.code.rawValue)" } ?? "ok")"
        case .schedule(_, let token): return "schedule \(token)"
        case .await(_, let token): return "await \(token)"
        }
    }

    @Test func nothingHappensBeforeResume() {
        var machine = machine(.status(200))
        machine.suspend()
        #expect(describe(machine.waitEnded(token: 1, now: now)) == "none")
        #expect(machine.lifecycle == .initialized)
        #expect(describe(machine.resume(now: now)) == "head 200", "the first resume clears an earlier suspend")
    }

    @Test func stepsAreHandedOutOneAtATime() {
        var machine = machine(StubResponse.status(200).body("ab"), bodyLength: 3)
        #expect(describe(machine.resume(now: now)) == "sent 3/3")
        #expect(machine.isDelivering)
        #expect(describe(machine.resume(now: now)) == "none", "no second call while one is out")
        #expect(describe(machine.cancel(now: now)) == "none", "the cancellation waits for the call out")
        #expect(describe(machine.delivered(now: now)) == "complete \(URLError.Code.cancelled.rawValue)")
        #expect(machine.lifecycle == .completed)
        #expect(describe(machine.delivered(now: now)) == "none")
        #expect(describe(machine.cancel(now: now)) == "none")
        #expect(describe(machine.resume(now: now)) == "none")
    }

    @Test func theScriptPlaysToTheEndThenCompletesOnce() {
        var machine = machine(StubResponse.status(200).body("ab").body("c"))
        var seen = [describe(machine.resume(now: now))]
        while machine.lifecycle != .completed { seen.append(describe(machine.delivered(now: now))) }
        #expect(seen == ["head 200", "body 2", "body 1", "complete ok"])
        #expect(describe(machine.cancel(now: now)) == "none", "a cancel after the completion does nothing")
        var other = Machine(url: Self.url, response: .status(1), bodyLength: nil)
        guard case .deliver(.completion(_, let metrics)) = other.resumedToCompletion(now: now) else {
            Issue.record("no completion")
            return
        }
        #expect(metrics.statusCode == 1)
    }

    @Test func waitsEndOnlyWithTheirOwnToken() {
        let gate = StubGate()
        var machine = machine(StubResponse().delay(.seconds(1)).wait(for: gate).status204())
        #expect(describe(machine.resume(now: now)) == "schedule 1")
        #expect(describe(machine.resume(now: now)) == "none", "the delay is running")
        #expect(describe(machine.waitEnded(token: 7, now: now)) == "none", "a stale wait")
        #expect(describe(machine.waitEnded(token: 1, now: now)) == "await 2")
        #expect(describe(machine.waitEnded(token: 1, now: now)) == "none", "that wait is over")
        #expect(describe(machine.waitEnded(token: 2, now: now)) == "head 204")
    }

    @Test func suspendHoldsTheNextStepAndResumeHandsItOut() {
        var machine = machine(StubResponse.status(200).delay(.seconds(1)).body("x"))
        #expect(describe(machine.resume(now: now)) == "head 200")
        machine.suspend()
        #expect(describe(machine.delivered(now: now)) == "none", "suspended: the delay does not start")
        #expect(describe(machine.resume(now: now)) == "schedule 1")
        machine.suspend()
        #expect(describe(machine.waitEnded(token: 1, now: now)) == "none", "the delay ended while suspended")
        #expect(describe(machine.resume(now: now)) == "body 1")
    }

    @Test func cancelCompletesInEveryStateButCompleted() {
        var initialized = machine(.status(200))
        #expect(describe(initialized.cancel(now: now)) == "complete \(URLError.Code.cancelled.rawValue)")
        var waiting = machine(StubResponse().delay(.seconds(1)))
        _ = waiting.resume(now: now)
        #expect(describe(waiting.cancel(now: now)) == "complete \(URLError.Code.cancelled.rawValue)")
        #expect(describe(waiting.waitEnded(token: 1, now: now)) == "none")
        var suspended = machine(.status(200))
        _ = suspended.resume(now: now)
        suspended.suspend()
        #expect(describe(suspended.delivered(now: now)) == "none")
        #expect(describe(suspended.cancel(now: now)) == "complete \(URLError.Code.cancelled.rawValue)")
        var hanging = machine(.hanging)
        #expect(describe(hanging.resume(now: now)) == "none")
        #expect(describe(hanging.cancel(now: now)) == "complete \(URLError.Code.cancelled.rawValue)")
    }

    @Test func aFailureStepCompletesWithItsError() {
        var machine = machine(StubResponse.failure(URLError(.timedOut)).body("never"))
        #expect(describe(machine.resume(now: now)) == "complete \(URLError.Code.timedOut.rawValue)")
    }

    @Test func metricsCountWhatWasDelivered() {
        let start = Date(timeIntervalSince1970: 10)
        var machine = machine(StubResponse().head(statusCode: 200, httpVersion: "HTTP/2").body("abcd"), bodyLength: nil)
        _ = machine.resume(now: start)
        _ = machine.delivered(now: start.addingTimeInterval(1))
        guard case .deliver(.completion(nil, let metrics)) = machine.delivered(now: start.addingTimeInterval(2)) else {
            Issue.record("expected the completion")
            return
        }
        #expect(metrics.startDate == start)
        #expect(metrics.endDate == start.addingTimeInterval(2))
        #expect(metrics.timeToFirstByte == 0)
        #expect(metrics.bytesReceived == 4)
        #expect(metrics.bytesSent == nil)
        #expect(metrics.networkProtocolName == "h2")
    }

    @Test func durationsBecomeDispatchIntervals() {
        #expect(StubTask.interval(.milliseconds(3)) == .nanoseconds(3_000_000))
        #expect(StubTask.interval(.seconds(-1)) == .nanoseconds(0))
        #expect(StubTask.interval(.seconds(Int64.max)) == .seconds(1_000_000_000))
    }
}

extension StubTask.StateMachine {
    /// Resumes and reports every delivery until the completion, which it returns.
    fileprivate mutating func resumedToCompletion(now: Date) -> Action {
        var action = resume(now: now)
        while lifecycle != .completed { action = delivered(now: now) }
        return action
    }
}

extension StubResponse {
    /// Appends a 204 head.
    fileprivate func status204() -> StubResponse { head(statusCode: 204) }
}
