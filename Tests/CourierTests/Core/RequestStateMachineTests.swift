import Testing

@testable import Courier

@Suite struct RequestStateMachineTests {
    typealias State = Request.State
    typealias Machine = Request.StateMachine

    /// The seed table: every ordered pair of states.
    @Test(arguments: [State.initialized, .resumed, .suspended, .cancelled, .finished])
    func canTransitionToFollowsTheLifecycleTable(from: State) {
        let expected: [State: Set<State>] = [
            .initialized: [.initialized, .resumed, .suspended, .cancelled, .finished],
            .resumed: [.suspended, .cancelled, .finished],
            .suspended: [.resumed, .cancelled, .finished],
            .cancelled: [],
            .finished: [],
        ]
        for to in [State.initialized, .resumed, .suspended, .cancelled, .finished] {
            #expect(from.canTransitionTo(to) == expected[from]?.contains(to), "\(from) → \(to)")
        }
    }

    /// A download whose only attempt succeeded and which has begun moving its file.
    private func committedDownload() -> Machine {
        var machine = Machine()
        #expect(machine.resume() == .startFirstAttempt)
        #expect(machine.taskCreated() == .resume)
        #expect(machine.attemptCompleted() == .complete)
        #expect(machine.beginCommitting() == true)
        return machine
    }

    /// A download that has begun moving its file: a stop cannot undo it, but ends the wait for
    /// the serializers' retry decision and rules out a retry.
    @Test(arguments: [true, false])
    func aStopWhileCommittingFinishesAsCommittedAndIsNeverRetried(duringTheDecision: Bool) {
        var machine = committedDownload()
        if duringTheDecision {
            #expect(machine.awaitSerializerChecks() == true)
            #expect(machine.cancel() == .finishCommitted)
            #expect(machine.finish() == true)
            #expect(machine.state == .finished, "a committed download is never reported cancelled")
            #expect(machine.retry() == .none)
        } else {
            // During the move itself: nothing to end yet, but the checks are skipped.
            #expect(machine.expire() == .none)
            #expect(machine.cancel() == .none)
            #expect(machine.awaitSerializerChecks() == false)
            #expect(machine.finish() == true)
            #expect(machine.state == .finished)
        }
    }

    @Test func aRetryAfterTheSerializersEndsTheCommit() {
        var machine = committedDownload()
        #expect(machine.awaitSerializerChecks() == true)
        #expect(machine.retry() == .startAttempt)
        #expect(!machine.isCommitting)
        #expect(machine.cancel() == .cancelTaskAndFinish, "the next attempt can be cancelled")
    }

    @Test func firstResumeStartsTheFirstAttemptOnce() {
        var machine = Machine()
        #expect(machine.resume() == .startFirstAttempt)
        #expect(machine.state == .resumed)
        #expect(machine.resume() == .none)
        #expect(machine.suspend() == .suspendTask)
        #expect(machine.resume() == .resumeTask)
    }

    @Test func eachHoldIsReleasedOnlyByItsOwner() {
        var machine = Machine()
        _ = machine.resume()
        let held = machine.holdBack(true, for: .responseHook)
        #expect(held)
        let heldAgain = machine.holdBack(true, for: .redirectReplay)
        #expect(!heldAgain, "already held: nothing to apply")
        // The replay catching up must not let the body run while the handler still decides.
        let replayReleased = machine.holdBack(false, for: .redirectReplay)
        #expect(!replayReleased)
        #expect(machine.isHeldBack)
        let notHeld = machine.holdBack(false, for: .consumer)
        #expect(!notHeld, "a reason not held changes nothing")
        let released = machine.holdBack(false, for: .responseHook)
        #expect(released)
        #expect(!machine.isHeldBack)
    }

    @Test func suspendingBeforeResumingDefersTheFirstAttempt() {
        var machine = Machine()
        #expect(machine.suspend() == .none)
        #expect(machine.state == .suspended)
        #expect(machine.taskCreated() == .cancel, "no attempt was asked for")
        #expect(machine.resume() == .startFirstAttempt)
        #expect(machine.suspend() == .suspendTask)
        #expect(machine.suspend() == .none)
        #expect(machine.taskCreated() == .leaveSuspended, "suspended before its task existed")
        #expect(machine.taskCreated() == .cancel, "one task per attempt")
    }

    @Test(arguments: [0, 1, 2])
    func cancelFinishesOnceFromAnyLiveState(steps: Int) {
        var machine = Machine()
        if steps >= 1 { _ = machine.resume() }
        if steps >= 2 { _ = machine.suspend() }
        #expect(machine.cancel() == .cancelTaskAndFinish)
        #expect(machine.state == .cancelled)
        #expect(machine.cancel() == .none)
        let finishedmachine = machine.finish()
        #expect(finishedmachine)
        let finishedAgainmachine = machine.finish()
        #expect(!finishedAgainmachine, "handlers run once")
        #expect(machine.state == .cancelled, "a cancelled request never becomes finished")
        #expect(machine.attemptCompleted() == .ignore)
        #expect(machine.resume() == .none && machine.suspend() == .none)
        #expect(machine.taskCreated() == .cancel)
    }

    @Test func completionFinishesAndFreezesTheState() {
        var machine = Machine()
        _ = machine.resume()
        #expect(machine.taskCreated() == .resume)
        #expect(machine.attemptCompleted() == .complete)
        let finishedmachine = machine.finish()
        #expect(finishedmachine)
        #expect(machine.state == .finished)
        #expect(machine.cancel() == .none, "cancel after finish does nothing")
        #expect(machine.attemptCompleted() == .ignore)
        let finishedAgainmachine = machine.finish()
        #expect(!finishedAgainmachine)
    }

    @Test func cancelRacingCompletionHasOneWinner() {
        // Completion first: the late cancel is ignored.
        var completedFirst = Machine()
        _ = completedFirst.resume()
        _ = completedFirst.taskCreated()
        #expect(completedFirst.attemptCompleted() == .complete)
        let finishedcompletedFirst = completedFirst.finish()
        #expect(finishedcompletedFirst)
        #expect(completedFirst.cancel() == .none)
        // Cancel first: the late completion is ignored.
        var cancelledFirst = Machine()
        _ = cancelledFirst.resume()
        #expect(cancelledFirst.cancel() == .cancelTaskAndFinish)
        let finishedcancelledFirst = cancelledFirst.finish()
        #expect(finishedcancelledFirst)
        #expect(cancelledFirst.attemptCompleted() == .ignore)
    }

    @Test func retryStartsAnAttemptOnlyWhileTheRequestLives() {
        var machine = Machine()
        #expect(machine.retry() == .none, "an initialized request has no attempt to retry")
        _ = machine.resume()
        #expect(machine.taskCreated() == .resume)
        #expect(machine.attemptCompleted() == .complete)
        #expect(machine.attemptCompleted() == .ignore, "one completion per attempt")
        #expect(machine.retry() == .none, "no decision was asked for")
        let decided1 = machine.awaitRetryDecision()
        #expect(decided1)
        let decided2 = machine.awaitRetryDecision()
        #expect(!decided2, "one decision at a time")
        #expect(machine.retry() == .startAttempt)
        #expect(machine.retry() == .none, "a second retry of the same failure starts nothing")
        #expect(machine.taskCreated() == .resume)
        #expect(machine.attemptCompleted() == .complete)
        _ = machine.suspend()
        let decided3 = machine.awaitRetryDecision()
        #expect(decided3)
        #expect(machine.retry() == .startAttempt, "a suspended request retries, suspended")
        #expect(machine.taskCreated() == .leaveSuspended)
        #expect(machine.attemptCompleted() == .complete)
        let decided4 = machine.awaitRetryDecision()
        #expect(decided4)
        #expect(machine.cancel() == .cancelTaskAndFinish)
        let finished = machine.finish()
        #expect(finished)
        #expect(machine.retry() == .none, "a request cancelled during the delay stays cancelled")
        #expect(machine.state == .cancelled)
    }

    @Test func aFailedAdaptationIsDecidedLikeAFailedAttempt() {
        var machine = Machine()
        _ = machine.resume()
        #expect(machine.attemptPhase == .starting)
        let decided5 = machine.awaitRetryDecision()
        #expect(decided5, "an adapter threw before any task existed")
        #expect(machine.retry() == .startAttempt)
        #expect(machine.attemptPhase == .starting)
    }

    @Test func retryAfterFinishingDoesNothing() {
        var machine = Machine()
        _ = machine.resume()
        let finished = machine.finish()
        #expect(finished)
        let decided6 = machine.awaitRetryDecision()
        #expect(!decided6)
        #expect(machine.retry() == .none)
        #expect(machine.state == .finished)
    }
}
