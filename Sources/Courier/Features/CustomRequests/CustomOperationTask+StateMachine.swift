import Foundation

extension CustomOperationTask {
    /// What a custom request's delegate may answer: a response, or the error it failed with.
    typealias Outcome = Result<CustomResponse, any Error>

    /// One custom operation's life as a value: the task feeds it the request's commands and the
    /// delegate's answers, and performs what it returns after unlocking. It is what makes the
    /// guarantees ``CustomRequestDelegate`` lists: one start, the first answer wins, nothing after
    /// a cancel, an answer held while suspended, progress only forwards.
    struct StateMachine {
        enum Phase {
            /// Made, not yet resumed: the delegate has not been started.
            case idle
            /// Started; no answer yet.
            case running
            /// Started and suspended; an answer now is held.
            case suspended
            /// Answered while suspended: delivered on the next resume, dropped on a cancel.
            case holding(Outcome)
            /// Answered or cancelled: nothing more happens.
            case ended(byCancel: Bool)
        }

        enum ResumeAction {
            case none
            /// Start the delegate's operation (and the progress polling).
            case start
            /// Deliver an answer held while suspended.
            case deliver(Outcome)
        }

        enum CancelAction: Equatable {
            case none
            /// Complete the task as cancelled, telling the delegate to stop if it was running.
            case complete(tellsDelegate: Bool)
        }

        enum AnswerAction {
            /// Deliver the answer now.
            case deliver(Outcome)
            /// Keep it until the task resumes.
            case hold
            /// Drop it, for this reason (told to event monitors).
            case ignore(String)
        }

        private(set) var phase = Phase.idle
        /// The highest progress reported, which later reports must exceed.
        private var reportedProgress = 0.0

        /// Whether an answer now would be dropped: the task was answered or cancelled.
        var willIgnore: Bool {
            switch phase {
            case .idle, .running, .suspended: false
            case .holding, .ended: true
            }
        }

        mutating func resume() -> ResumeAction {
            switch phase {
            case .idle:
                phase = .running
                return .start
            case .suspended:
                phase = .running
                return .none
            case .holding(let outcome):
                phase = .ended(byCancel: false)
                return .deliver(outcome)
            case .running, .ended:
                return .none
            }
        }

        mutating func suspend() {
            if case .running = phase { phase = .suspended }
        }

        mutating func cancel() -> CancelAction {
            switch phase {
            case .idle, .holding:
                // Never started, or already answered: the delegate has nothing to stop.
                phase = .ended(byCancel: true)
                return .complete(tellsDelegate: false)
            case .running, .suspended:
                phase = .ended(byCancel: true)
                return .complete(tellsDelegate: true)
            case .ended:
                return .none
            }
        }

        mutating func answer(_ outcome: Outcome) -> AnswerAction {
            switch phase {
            case .idle:
                return .ignore("the operation was not started")
            case .running:
                phase = .ended(byCancel: false)
                return .deliver(outcome)
            case .suspended:
                phase = .holding(outcome)
                return .hold
            case .holding, .ended(byCancel: false):
                return .ignore("the operation had answered already")
            case .ended(byCancel: true):
                return .ignore("the request was cancelled")
            }
        }

        /// The progress to report for `value` (clamped to 0…1), or `nil` when it is not news: not
        /// above what was reported, not a number, or the operation is not running.
        mutating func progressed(_ value: Double) -> Double? {
            switch phase {
            case .running, .suspended: break
            case .idle, .holding, .ended: return nil
            }
            guard !value.isNaN else { return nil }
            let clamped = min(max(value, 0), 1)
            guard clamped > reportedProgress else { return nil }
            reportedProgress = clamped
            return clamped
        }
    }
}
