import CourierTestSupport
import Foundation
import Testing

@testable import Courier

/// Every event in every state the machine can reach, by walking every sequence of events up to a
/// depth: the lifecycle rules hold after each step, whatever came before.
@Suite struct RequestStateMachineExhaustiveTests {
    typealias Machine = Request.StateMachine

    enum Event: CaseIterable {
        case resume, suspend, cancel, expire, taskCreated, attemptCompleted, awaitRetryDecision, retry, finish
        case headCheckStarted, holdCompletion, headAccepted, headRejected, toggleHoldBack, beginCommitting
        case armDeadline, awaitSerializerChecks
    }

    /// What a history of events has produced so far, to check each step against.
    struct History {
        var machine = Machine()
        var firstAttemptStarts = 0
        var finishes = 0
        var heldCompletions = 0
        var releasedCompletions = 0
    }

    /// Records an issue only when `condition` fails: the message (which names the path) is built
    /// only then, so the walk's half a million steps stay fast.
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { Issue.record(Comment(rawValue: message())) }
    }

    static let metrics = RequestMetrics(
        startDate: Date(timeIntervalSince1970: 0),
        endDate: Date(timeIntervalSince1970: 1),
        timeToFirstByte: nil,
        bytesSent: 0,
        bytesReceived: 0,
        statusCode: nil,
        remoteAddress: nil,
        networkProtocolName: nil
    )

    static func isChecking(_ machine: Machine) -> (checking: Bool, holding: Bool) {
        guard case .checking(let held) = machine.headCheck else { return (false, false) }
        return (true, held != nil)
    }

    /// Applies `event`, checking the rules that hold for every state; returns the new history.
    static func step(_ history: History, _ event: Event, path: [Event]) -> History {
        var next = history
        let before = history.machine
        switch event {
        case .resume:
            let action = next.machine.resume()
            if action == .startFirstAttempt {
                next.firstAttemptStarts += 1
                check(next.machine.attemptPhase == .starting, "\(path)")
            }
            if before.hasFinished { check(action == .none, "\(path)") }
        case .suspend:
            let action = next.machine.suspend()
            if before.hasFinished { check(action == .none, "\(path)") }
            if action == .suspendTask { check(before.state == .resumed, "\(path)") }
        case .cancel:
            let action = next.machine.cancel()
            if before.state == .cancelled || before.state == .finished { check(action == .none, "\(path)") }
            Self.checkStopWhileCommitting(before, next.machine, action, path: path)
            if action == .cancelTaskAndFinish {
                check(next.machine.state == .cancelled, "\(path)")
            }
            // The request finishes in the same lock, as `Request.cancel()` does.
            if action != .none, next.machine.finish() { next.finishes += 1 }
        case .expire:
            let action = next.machine.expire()
            if before.hasFinished { check(action == .none, "\(path)") }
            Self.checkStopWhileCommitting(before, next.machine, action, path: path)
            if action != .none, next.machine.finish() { next.finishes += 1 }
        case .taskCreated:
            let action = next.machine.taskCreated()
            if before.attemptPhase != .starting || before.hasFinished { check(action == .cancel, "\(path)") }
            if action != .cancel { check(next.machine.attemptPhase == .running, "\(path)") }
            if action == .resume { check(before.state == .resumed, "\(path)") }
        case .attemptCompleted:
            let action = next.machine.attemptCompleted()
            if before.attemptPhase != .running || before.hasFinished { check(action == .ignore, "\(path)") }
            if action == .complete { check(next.machine.attemptPhase == .idle, "\(path)") }
        case .awaitRetryDecision:
            let decides = next.machine.awaitRetryDecision()
            if before.hasFinished || before.attemptPhase == .running || before.attemptPhase == .deciding {
                check(!decides, "\(path)")
            }
        case .retry:
            let action = next.machine.retry()
            if before.hasFinished || before.attemptPhase != .deciding { check(action == .none, "\(path)") }
            if action == .startAttempt {
                check(next.machine.attemptPhase == .starting, "\(path)")
                check(!next.machine.isCommitting, "\(path): a new attempt is not committed")
                check(!isChecking(next.machine).checking && next.machine.headRejection == nil, "\(path): a new attempt")
                check(!next.machine.isHeldBack, "\(path): the next attempt starts unheld")
            }
        case .finish:
            if next.machine.finish() { next.finishes += 1 }
        case .headCheckStarted:
            let started = next.machine.headCheckStarted()
            let wasUnchecked = !isChecking(before).checking && before.headRejection == nil
            check(started == (before.attemptPhase == .running && !before.hasFinished && wasUnchecked), "\(path)")
            if started { check(isChecking(next.machine) == (true, false), "\(path)") }
            // A second head neither restarts a check (and drops what it holds) nor overturns a verdict.
            if !started {
                check(isChecking(next.machine) == isChecking(before), "\(path)")
                check((next.machine.headRejection != nil) == (before.headRejection != nil), "\(path)")
            }
        case .holdCompletion:
            let held = next.machine.holdCompletionForHeadCheck(.init(error: nil, metrics: Self.metrics))
            let wasWaiting =
                isChecking(before) == (true, false) && before.attemptPhase == .running && !before.hasFinished
            check(held == wasWaiting, "\(path): a completion is held only while its head is checked")
            if held { next.heldCompletions += 1 }
        case .headAccepted, .headRejected:
            let rejection: CourierError? = event == .headRejected ? .explicitlyCancelled : nil
            let action = next.machine.headChecked(rejection: rejection)
            let (wasChecking, wasHolding) = isChecking(before)
            switch action {
            case .none:
                check(!wasChecking || before.hasFinished || (rejection == nil && !wasHolding), "\(path)")
            case .cancelTask:
                check(wasChecking && !wasHolding && rejection != nil, "\(path)")
            case .completeHeld:
                check(wasChecking && wasHolding, "\(path)")
                next.releasedCompletions += 1
            }
            if wasChecking, !before.hasFinished {
                check((next.machine.headRejection != nil) == (rejection != nil), "\(path): the verdict stands")
                check(!isChecking(next.machine).checking, "\(path)")
            }
        case .toggleHoldBack:
            let changed = next.machine.holdBack(!before.isHeldBack, for: .consumer)
            check(changed && next.machine.isHeldBack != before.isHeldBack, "\(path)")
            check(next.machine.taskGeneration != before.taskGeneration, "\(path): a hold is a change to apply")
        case .beginCommitting:
            let committed = next.machine.beginCommitting()
            check(committed == !before.hasFinished, "\(path)")
        case .awaitSerializerChecks:
            let waits = next.machine.awaitSerializerChecks()
            if before.wasStoppedWhileCommitting { check(!waits, "\(path): a stop while committing rules out a retry") }
            if waits { check(next.machine.attemptPhase == .deciding, "\(path)") }
        case .armDeadline:
            let armed = next.machine.armDeadline(at: .seconds(path.count))
            check(armed == (before.deadline == nil && !before.hasFinished), "\(path): armed once, while running")
        }
        // Rules for every step.
        let after = next.machine
        if after.state != before.state {
            check(before.state.canTransitionTo(after.state), "\(path): \(before.state) → \(after.state)")
        }
        if before.hasFinished {
            check(after.state == before.state, "\(path): a finished request's state never changes")
            check(after.hasFinished, "\(path)")
        }
        if after.state == .cancelled || after.state == .finished {
            check(after.hasFinished, "\(path): a request that ended has finished")
        }
        check(next.firstAttemptStarts <= 1, "\(path): the first attempt starts once")
        check(next.finishes <= 1, "\(path): a request finishes once")
        check(next.releasedCompletions <= next.heldCompletions, "\(path): a held completion is released once")
        if let deadline = before.deadline { check(after.deadline == deadline, "\(path): a deadline never moves") }
        if after.state != before.state, after.state == .resumed || after.state == .suspended, before.hasStartedAttempts
        {
            check(after.taskGeneration != before.taskGeneration, "\(path): the task must follow the new state")
        }
        return next
    }

    /// A cancel or expiry of a committing request never cancels it: it finishes it as committed
    /// when only the serializers' retry decision was pending, and otherwise waits.
    static func checkStopWhileCommitting(
        _ before: Machine,
        _ after: Machine,
        _ action: Machine.CancelAction,
        path: [Event]
    ) {
        guard before.isCommitting, !before.hasFinished else {
            check(action != .finishCommitted, "\(path): only a committing request finishes as committed")
            return
        }
        check(action != .cancelTaskAndFinish, "\(path): a committed request cannot be cancelled")
        check(after.wasStoppedWhileCommitting, "\(path): the stop is remembered")
        let waitsForChecks = before.isAwaitingSerializerChecks && before.attemptPhase == .deciding
        check((action == .finishCommitted) == waitsForChecks, "\(path)")
    }

    /// Every sequence of up to `depth` events, depth first.
    static func walk(_ history: History, path: [Event], depth: Int, visited: inout Int) {
        guard depth > 0 else { return }
        for event in Event.allCases {
            let nextPath = path + [event]
            let next = step(history, event, path: nextPath)
            visited += 1
            walk(next, path: nextPath, depth: depth - 1, visited: &visited)
        }
    }

    @Test func everyEventInEveryReachableStateKeepsTheRules() async {
        await cpuBound {
            var visited = 0
            Self.walk(History(), path: [], depth: 5, visited: &visited)
            // 17 + 17² + … + 17⁵: every sequence was stepped through.
            #expect(visited == 17 + 289 + 4_913 + 83_521 + 1_419_857)
        }
    }

    @Test func cancelAlwaysEndsARequestThatHasNotFinished() {
        // Whatever the history, a cancel before finishing ends the request with the cancellation.
        for first in Event.allCases {
            for second in Event.allCases {
                var history = History()
                history = Self.step(history, first, path: [first])
                history = Self.step(history, second, path: [first, second])
                let wasFinished = history.machine.hasFinished || history.machine.isCommitting
                let state = history.machine.state
                var machine = history.machine
                let action = machine.cancel()
                if !wasFinished {
                    #expect(state != .cancelled, "\([first, second])")
                    #expect(action == .cancelTaskAndFinish, "\([first, second])")
                    let finishes = machine.finish()
                    #expect(finishes, "\([first, second]): the cancel's finish is the first")
                } else {
                    #expect(action != .cancelTaskAndFinish, "\([first, second])")
                }
            }
        }
    }
}
