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
    /// | idle, starting | attempt failed | deciding | the retriers decide (an adapter's failure too)  |
    /// | deciding   | retry            | starting   | unless the request was cancelled meanwhile       |
    ///
    /// While the retriers decide and any delay runs, the request stays `resumed` or `suspended`;
    /// the next attempt's task follows ``taskCreated()``, so a request suspended during the delay
    /// starts its retry suspended.
    struct StateMachine {
        /// The public state.
        private(set) var state: State = .initialized
        /// Whether the first attempt has been asked for (it starts on the first resume).
        private(set) var hasStartedAttempts = false
        /// Whether the request has finished, by completing or by being cancelled; handlers run once, then.
        private(set) var hasFinished = false
        /// Where the current attempt is.
        private(set) var attemptPhase = AttemptPhase.idle

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
                if hasStartedAttempts { return .resumeTask }
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
                return .suspendTask
            case .suspended, .cancelled, .finished:
                return .none
            }
        }

        mutating func cancel() -> CancelAction {
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
                return .resume
            case .initialized, .suspended:
                attemptPhase = .running
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
                return .startAttempt
            case .initialized, .cancelled, .finished:
                return .none
            }
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
