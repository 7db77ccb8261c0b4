import Testing

@testable import Courier

/// Every event in every state the machine can reach, by walking every sequence of events up to a
/// depth: the lifecycle rules hold after each step, whatever came before.
@Suite struct RequestStateMachineExhaustiveTests {
    typealias Machine = Request.StateMachine

    enum Event: CaseIterable {
        case resume, suspend, cancel, expire, taskCreated, attemptCompleted, awaitRetryDecision, retry, finish
    }

    /// What a history of events has produced so far, to check each step against.
    struct History {
        var machine = Machine()
        var firstAttemptStarts = 0
        var finishes = 0
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
                #expect(next.machine.attemptPhase == .starting, "\(path)")
            }
            if before.hasFinished { #expect(action == .none, "\(path)") }
        case .suspend:
            let action = next.machine.suspend()
            if before.hasFinished { #expect(action == .none, "\(path)") }
            if action == .suspendTask { #expect(before.state == .resumed, "\(path)") }
        case .cancel:
            let action = next.machine.cancel()
            if before.state == .cancelled || before.state == .finished { #expect(action == .none, "\(path)") }
            if action == .cancelTaskAndFinish {
                #expect(next.machine.state == .cancelled, "\(path)")
                // The request finishes in the same lock, as `Request.cancel()` does.
                if next.machine.finish() { next.finishes += 1 }
            }
        case .expire:
            let action = next.machine.expire()
            if before.hasFinished { #expect(action == .none, "\(path)") }
            if action == .cancelTaskAndFinish, next.machine.finish() { next.finishes += 1 }
        case .taskCreated:
            let action = next.machine.taskCreated()
            if before.attemptPhase != .starting || before.hasFinished { #expect(action == .cancel, "\(path)") }
            if action != .cancel { #expect(next.machine.attemptPhase == .running, "\(path)") }
            if action == .resume { #expect(before.state == .resumed, "\(path)") }
        case .attemptCompleted:
            let action = next.machine.attemptCompleted()
            if before.attemptPhase != .running || before.hasFinished { #expect(action == .ignore, "\(path)") }
            if action == .complete { #expect(next.machine.attemptPhase == .idle, "\(path)") }
        case .awaitRetryDecision:
            let decides = next.machine.awaitRetryDecision()
            if before.hasFinished || before.attemptPhase == .running || before.attemptPhase == .deciding {
                #expect(!decides, "\(path)")
            }
        case .retry:
            let action = next.machine.retry()
            if before.hasFinished || before.attemptPhase != .deciding { #expect(action == .none, "\(path)") }
            if action == .startAttempt { #expect(next.machine.attemptPhase == .starting, "\(path)") }
        case .finish:
            if next.machine.finish() { next.finishes += 1 }
        }
        // Rules for every step.
        let after = next.machine
        if after.state != before.state {
            #expect(before.state.canTransitionTo(after.state), "\(path): \(before.state) → \(after.state)")
        }
        if before.hasFinished {
            #expect(after.state == before.state, "\(path): a finished request's state never changes")
            #expect(after.hasFinished, "\(path)")
        }
        if after.state == .cancelled || after.state == .finished {
            #expect(after.hasFinished, "\(path): a request that ended has finished")
        }
        #expect(next.firstAttemptStarts <= 1, "\(path): the first attempt starts once")
        #expect(next.finishes <= 1, "\(path): a request finishes once")
        return next
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

    @Test func everyEventInEveryReachableStateKeepsTheRules() {
        var visited = 0
        Self.walk(History(), path: [], depth: 5, visited: &visited)
        // 9 + 81 + … + 9^5: every sequence was stepped through.
        #expect(visited == 9 + 81 + 729 + 6_561 + 59_049)
    }

    @Test func cancelAlwaysEndsARequestThatHasNotFinished() {
        // Whatever the history, a cancel before finishing ends the request with the cancellation.
        for first in Event.allCases {
            for second in Event.allCases {
                var history = History()
                history = Self.step(history, first, path: [first])
                history = Self.step(history, second, path: [first, second])
                let wasFinished = history.machine.hasFinished
                let state = history.machine.state
                var machine = history.machine
                let action = machine.cancel()
                if !wasFinished {
                    #expect(state != .cancelled, "\([first, second])")
                    #expect(action == .cancelTaskAndFinish, "\([first, second])")
                    let finishes = machine.finish()
                    #expect(finishes, "\([first, second]): the cancel's finish is the first")
                } else {
                    #expect(action == .none, "\([first, second])")
                }
            }
        }
    }
}
