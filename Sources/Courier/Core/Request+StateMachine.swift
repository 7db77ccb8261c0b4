extension Request {
    /// The lifecycle of a request as a value: each event returns what the request must do, and
    /// the machine itself does no I/O, takes no lock and reads no clock. ``Request`` holds it
    /// behind its lock and performs the actions after releasing it.
    ///
    /// | state        | resume                      | suspend          | cancel                 | attempt completes |
    /// |--------------|-----------------------------|------------------|------------------------|-------------------|
    /// | initialized  | → resumed, start an attempt | → suspended      | → cancelled, finish    | (cannot happen)   |
    /// | resumed      | nothing                     | → suspended, task| → cancelled, cancel task and finish | → finished   |
    /// | suspended    | → resumed, resume the task (or start the first attempt) | nothing | → cancelled, cancel task and finish | → finished |
    /// | cancelled    | nothing                     | nothing          | nothing                | ignored           |
    /// | finished     | nothing                     | nothing          | nothing                | ignored           |
    ///
    /// Alongside the state, ``attemptPhase`` tracks the current attempt, so each step happens once
    /// per attempt whoever asks:
    ///
    /// | phase      | event            | → phase    | meaning                                          |
    /// |------------|------------------|------------|--------------------------------------------------|
    /// | idle       | first resume     | starting   | build and adapt the URLRequest                   |
    /// | starting   | task created     | running    | any other task is cancelled                      |
    /// | running    | attempt completes| idle       | a completion of any other task is ignored        |
    /// | running    | redirect task created | running | the request's task is now the redirect's next exchange |
    /// | idle, starting | attempt failed | deciding | the retriers decide (an adapter's failure too)  |
    /// | deciding   | retry            | starting   | unless the request was cancelled meanwhile       |
    ///
    /// While the retriers decide and any delay runs, the request stays `resumed` or `suspended`;
    /// the next attempt's task follows ``taskCreated()``, so a request suspended during the delay
    /// starts its retry suspended.
    ///
    /// A running attempt whose head a head validator (``DataRequest/validateResponseHead(queue:_:)``)
    /// or an `onHTTPResponse` handler checks goes through ``headCheck``; its completion waits for
    /// the verdict (the handler's `.cancel` cancels the request instead, which ends it at once):
    ///
    /// | head check | event                         | → head check | action                               |
    /// |------------|-------------------------------|--------------|--------------------------------------|
    /// | none       | head arrives, to be checked   | checking     | ask the handler, then the validator  |
    /// | checking   | the attempt completes         | checking, holding it | nothing until the verdict     |
    /// | checking   | accepted                      | none         | nothing (replay a held completion)   |
    /// | checking   | rejected                      | rejected     | cancel the task (or replay a held completion) |
    /// | rejected   | the attempt completes         | rejected     | it fails with the rejection, not the cancellation |
    /// | any        | the next attempt starts       | none         |                                      |
    ///
    /// Beside the lifecycle, the machine counts every change to what the transport task should be
    /// doing (``taskGeneration``: resumed, suspended, held back by a slow consumer), and knows
    /// whether the request has committed to succeeding (a download being moved into place), after
    /// which a cancel or the deadline changes nothing, and when the deadline falls (armed once,
    /// while the request runs; ``expire()`` ends the request there).
    struct StateMachine {
        /// The public state.
        private(set) var state: State = .initialized
        /// Whether the first attempt has been asked for (it starts on the first resume).
        private(set) var hasStartedAttempts = false
        /// Whether the request has finished, by completing or by being cancelled; handlers run once, then.
        private(set) var hasFinished = false
        /// Where the current attempt is.
        private(set) var attemptPhase = AttemptPhase.idle
        /// The current attempt's head check (the third table above).
        private(set) var headCheck = HeadCheck.none
        /// Who asked the transfer to pause until they catch up (backpressure), whatever ``state``
        /// says. Each reason is held and released on its own: one owner letting go must not
        /// release what another still holds.
        private(set) var holdReasons: HoldReasons = []
        /// Whether anyone holds the transfer back.
        var isHeldBack: Bool { !holdReasons.isEmpty }
        /// Counts changes to what the task should be doing (running, paused, held back), so that
        /// callers racing to apply them can tell whether what they applied is still current.
        private(set) var taskGeneration: UInt64 = 0
        /// Set once the request has committed to succeeding: a cancel or the deadline can no
        /// longer stop it.
        private(set) var isCommitting = false
        /// A cancel or the deadline came while the request was committing: it finishes as
        /// committed, and is never retried.
        private(set) var wasStoppedWhileCommitting = false
        /// The finish waits for the serializers' retry decision (``awaitSerializerChecks()``).
        private(set) var isAwaitingSerializerChecks = false
        /// When the request fails if still running, over all its attempts and retry delays, as a
        /// time on the session's clock; `nil` until armed.
        private(set) var deadline: Duration?

        /// A head check and the completion it holds back.
        enum HeadCheck {
            /// No check under way: none was asked for, or its verdict let the head through.
            case none
            /// The validator runs; `held` is the attempt's completion, if it came meanwhile.
            case checking(held: HeldCompletion?)
            /// The validator threw: the attempt fails with this, whatever its transport said.
            case rejected(CourierError)
        }

        /// An attempt's completion, held while its head is checked.
        struct HeldCompletion {
            let error: URLError?
            let metrics: RequestMetrics
        }

        /// Why the head validator rejected the current attempt, if it did.
        var headRejection: CourierError? {
            if case .rejected(let error) = headCheck { return error }
            return nil
        }

        /// The steps of one attempt (the second table above).
        enum AttemptPhase: Equatable {
            /// No attempt in flight: none yet, or the last one completed.
            case idle
            /// The URLRequest is being built and adapted; a task is expected.
            case starting
            /// The task is on the wire.
            case running
            /// The attempt failed and the retriers are deciding, or the retry delay runs.
            case deciding
        }

        /// What to do after ``resume()``.
        enum ResumeAction: Equatable {
            /// Nothing: already running, or over.
            case none
            /// Build the URLRequest and start the first attempt.
            case startFirstAttempt
            /// Resume the current transport task, if one exists yet.
            case resumeTask
        }

        /// What to do after ``suspend()``.
        enum SuspendAction: Equatable {
            case none
            /// Suspend the current transport task, if one exists yet.
            case suspendTask
        }

        /// What to do after ``cancel()``.
        enum CancelAction: Equatable {
            case none
            /// Cancel the current transport task, if any, and finish with the cancellation error.
            case cancelTaskAndFinish
            /// Finish now, succeeded: the request committed (a download's file is in place) and
            /// only its serializers' retry decision was pending, which the stop ends.
            case finishCommitted
        }

        /// What to do when a transport task is ready to run.
        enum TaskAction: Equatable {
            /// Resume it: the request is resumed.
            case resume
            /// Leave it suspended until the request is resumed.
            case leaveSuspended
            /// Cancel it: the request was cancelled (or finished) while the task was being made.
            case cancel
        }

        /// What to do when an attempt's transport task completes.
        enum CompletionAction: Equatable {
            /// Nothing: the request was cancelled (and has finished) already.
            case ignore
            /// Validate, then finish (or, later, retry).
            case complete
        }

        mutating func resume() -> ResumeAction {
            switch state {
            case .initialized:
                state = .resumed
                hasStartedAttempts = true
                attemptPhase = .starting
                return .startFirstAttempt
            case .suspended:
                state = .resumed
                if hasStartedAttempts {
                    taskGeneration &+= 1
                    return .resumeTask
                }
                hasStartedAttempts = true
                attemptPhase = .starting
                return .startFirstAttempt
            case .resumed, .cancelled, .finished:
                return .none
            }
        }

        mutating func suspend() -> SuspendAction {
            switch state {
            case .initialized:
                state = .suspended
                return .none
            case .resumed:
                state = .suspended
                taskGeneration &+= 1
                return .suspendTask
            case .suspended, .cancelled, .finished:
                return .none
            }
        }

        mutating func cancel() -> CancelAction {
            guard !isCommitting else { return stopWhileCommitting() }
            switch state {
            case .initialized, .resumed, .suspended:
                state = .cancelled
                return .cancelTaskAndFinish
            case .cancelled, .finished:
                return .none
            }
        }

        /// The request's deadline passed: like a cancel, but the request ends `finished`, with the
        /// timeout as its error.
        mutating func expire() -> CancelAction {
            guard !isCommitting else { return stopWhileCommitting() }
            switch state {
            case .initialized, .resumed, .suspended: return hasFinished ? .none : .cancelTaskAndFinish
            case .cancelled, .finished: return .none
            }
        }

        mutating func taskCreated() -> TaskAction {
            guard attemptPhase == .starting, !hasFinished else { return .cancel }
            switch state {
            case .resumed:
                attemptPhase = .running
                taskGeneration &+= 1
                return .resume
            case .initialized, .suspended:
                attemptPhase = .running
                taskGeneration &+= 1
                return .leaveSuspended
            case .cancelled, .finished:
                return .cancel
            }
        }

        /// The transport made the task for the next exchange of the running attempt (a redirect
        /// being followed): run it, hold it or cancel it, as for the attempt's first task.
        mutating func redirectTaskCreated() -> TaskAction {
            guard attemptPhase == .running, !hasFinished else { return .cancel }
            switch state {
            case .resumed:
                taskGeneration &+= 1
                return .resume
            case .initialized, .suspended:
                taskGeneration &+= 1
                return .leaveSuspended
            case .cancelled, .finished:
                return .cancel
            }
        }

        mutating func attemptCompleted() -> CompletionAction {
            guard attemptPhase == .running, !hasFinished else { return .ignore }
            switch state {
            case .resumed, .suspended, .initialized:
                attemptPhase = .idle
                return .complete
            case .cancelled, .finished:
                return .ignore
            }
        }

        /// An attempt (or its adaptation) failed: returns `true` if the retriers should now decide,
        /// `false` if the request has finished or a decision is already under way.
        mutating func awaitRetryDecision() -> Bool {
            guard !hasFinished, attemptPhase == .idle || attemptPhase == .starting else { return false }
            attemptPhase = .deciding
            return true
        }

        /// A cancel or the deadline while committing: remembered, so that no retry follows; the
        /// request finishes at once if it was only waiting for its serializers' retry decision.
        private mutating func stopWhileCommitting() -> CancelAction {
            guard !hasFinished else { return .none }
            wasStoppedWhileCommitting = true
            return isAwaitingSerializerChecks && attemptPhase == .deciding ? .finishCommitted : .none
        }

        /// The last attempt succeeded, and the finish waits while the serializers' failures are
        /// offered to the retriers: as ``awaitRetryDecision()``, unless a cancel or the deadline
        /// came while a download committed its file (then it finishes at once, as committed).
        mutating func awaitSerializerChecks() -> Bool {
            guard !wasStoppedWhileCommitting, awaitRetryDecision() else { return false }
            isAwaitingSerializerChecks = true
            return true
        }

        /// What to do when a retrier's decision (and delay) has run its course.
        enum RetryAction: Equatable {
            /// Nothing: the request was cancelled (and has finished) meanwhile.
            case none
            /// Count the retry and start the next attempt.
            case startAttempt
        }

        mutating func retry() -> RetryAction {
            guard !hasFinished, attemptPhase == .deciding else { return .none }
            switch state {
            case .resumed, .suspended:
                attemptPhase = .starting
                // A download retried after its serializers failed is no longer committed.
                isCommitting = false
                isAwaitingSerializerChecks = false
                headCheck = .none
                // A hold was for the previous attempt's consumer; the next one starts unheld.
                if isHeldBack {
                    holdReasons = []
                    taskGeneration &+= 1
                }
                return .startAttempt
            case .initialized, .cancelled, .finished:
                return .none
            }
        }

        /// The current attempt's head arrived and a validator will check it: its completion waits
        /// for the verdict. Returns `false` (nothing to check) unless an attempt is running with no
        /// check under way and none rejected: a transport that reports a second head (a
        /// `multipart/x-mixed-replace` response) neither restarts a check nor overturns a rejection.
        mutating func headCheckStarted() -> Bool {
            guard attemptPhase == .running, !hasFinished, case .none = headCheck else { return false }
            headCheck = .checking(held: nil)
            return true
        }

        /// The running attempt completed: returns `true` if its head is still being checked, and
        /// the completion is held for the verdict; `false` if it goes ahead now.
        mutating func holdCompletionForHeadCheck(_ completion: HeldCompletion) -> Bool {
            guard attemptPhase == .running, !hasFinished, case .checking(held: nil) = headCheck else { return false }
            headCheck = .checking(held: completion)
            return true
        }

        /// What to do with a head validator's verdict.
        enum HeadVerdictAction {
            /// Nothing: accepted, or no check was under way (the request finished, or another
            /// attempt started).
            case none
            /// Rejected while the transfer runs: cancel it (its completion then fails with the rejection).
            case cancelTask
            /// The attempt had completed meanwhile: handle its completion now.
            case completeHeld(HeldCompletion)
        }

        /// The head validator accepted the head (`rejection` is `nil`) or rejected it.
        mutating func headChecked(rejection: CourierError?) -> HeadVerdictAction {
            guard !hasFinished, case .checking(let held) = headCheck else { return .none }
            headCheck = rejection.map(HeadCheck.rejected) ?? .none
            if let held { return .completeHeld(held) }
            return rejection == nil ? .none : .cancelTask
        }

        /// Why the transfer is held back.
        struct HoldReasons: OptionSet, Sendable {
            let rawValue: UInt8
            /// The body's consumer fell behind, or a stream's head is being checked.
            static let consumer = HoldReasons(rawValue: 1 << 0)
            /// An `onHTTPResponse` handler decides about the head.
            static let responseHook = HoldReasons(rawValue: 1 << 1)
            /// An attempt replays a declined redirect faster than the request takes it.
            static let redirectReplay = HoldReasons(rawValue: 1 << 2)
        }

        /// `reason` wants the transfer paused until it catches up (`true`), or no longer does.
        /// Returns whether that changed what the task should be doing: the transfer runs only
        /// when no reason holds it.
        mutating func holdBack(_ hold: Bool, for reason: HoldReasons) -> Bool {
            let wasHeld = isHeldBack
            if hold { holdReasons.insert(reason) } else { holdReasons.remove(reason) }
            guard isHeldBack != wasHeld else { return false }
            taskGeneration &+= 1
            return true
        }

        /// Arms the deadline at `instant`, unless it is armed already or the request has finished:
        /// returns whether it did (then the caller starts the timer that ends in ``expire()``).
        mutating func armDeadline(at instant: Duration) -> Bool {
            guard deadline == nil, !hasFinished else { return false }
            deadline = instant
            return true
        }

        /// Commits the request to succeeding, unless it has finished: returns `false` if it had.
        mutating func beginCommitting() -> Bool {
            guard !hasFinished else { return false }
            isCommitting = true
            return true
        }

        /// Marks the request finished and returns `true`, or `false` if it had finished already.
        /// A cancelled request keeps the state `cancelled` (it never becomes `finished`).
        mutating func finish() -> Bool {
            guard !hasFinished else { return false }
            hasFinished = true
            if state != .cancelled { state = .finished }
            return true
        }
    }
}
