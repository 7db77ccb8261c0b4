import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// After a failed attempt: the retriers' decision, the budget, the delay on the session's clock
// (which a trigger or a success on the same origin may cut short), and the next attempt.
extension Request {
    /// After an attempt: finishes on success; on failure asks the session's retriers, then
    /// finishes or starts another attempt.
    func retryOrFinish(error: CourierError?) {
        guard let error else {
            finishSucceeded()
            return
        }
        guard canRetry else {
            finish(error: error)
            return
        }
        let isRunning = mutableState.withLock { state -> Bool in
            guard state.machine.awaitRetryDecision() else { return false }
            state.error = error  // visible to the retriers
            return true
        }
        guard isRunning else { return }
        // Nothing in this frame holds the session: a request nobody asks about finishes with its
        // session free to go (a caller resumed by a handler may drop it at once).
        if !askRetriers(dueTo: error) { finish(error: error) }
    }

    /// Hands the decision to the session's retriers, or returns `false` when there is no session
    /// or no retrier to ask.
    private func askRetriers(dueTo error: CourierError) -> Bool {
        // A suspended request let go of its session; the session may still be there. Only the
        // plan is read from it: the decision runs on its own, holding nothing of the session.
        guard let plan = weakSession?.retryPlan(for: self) else { return false }
        Session.decideRetry(of: self, by: plan.retrier, budget: plan.budget, dueTo: error) { [self] result in
            switch result {
            case .retry, .retryWithDelay:
                retry(afterDelay: result.delay, dueTo: error)
            case .doNotRetry:
                finish(error: error)
            case .doNotRetryWithError(let retryError):
                finish(error: .requestRetryFailed(retryError: retryError, originalError: error))
            }
        }
        return true
    }

    /// Starts the next attempt: now, or after `delay` seconds on the session's clock unless a
    /// ``RetryTrigger`` or a success on the same origin starts it sooner. A delay that would end
    /// at or past ``Session/Configuration/requestDeadline`` fails the request with its last error
    /// instead, and so does a session that is gone.
    ///
    /// `otherwise` replaces that failure when the retry cannot happen: a serializer's failure is
    /// its handler's, not the request's (see `SerializerCheck`).
    func retry(
        afterDelay delay: TimeInterval?,
        dueTo error: CourierError,
        otherwise giveUp: (@Sendable () -> Void)? = nil
    ) {
        let giveUp = giveUp ?? { [self] in _ = finish(error: error) }
        // The clock, not the session: nothing in this frame holds the session while the request
        // finishes (see `retryOrFinish`).
        guard let clock = weakSession?.clock else {
            giveUp()
            return
        }
        let (deadline, retryCount) = mutableState.withLock { ($0.machine.deadline, $0.retryCount) }
        let now = clock.now()
        switch RetrySchedule.decide(delay: delay, now: now, deadline: deadline) {
        case .pastDeadline:
            giveUp()
        case .retryNow:
            retryNow(endingWaitFor: retryCount)
        case .wait(let due, let seconds):
            guard let isRecorded = weakSession?.recordRetryWait(of: self, retryCount: retryCount, due: due) else {
                giveUp()
                return
            }
            guard isRecorded else { return }  // Finished meanwhile.
            monitor?.request(self, willRetryAfter: seconds)
            // The sleep holds the request: one that nobody else holds still gets its retry.
            let sleep = Task { [self] in
                try? await clock.sleep(due)
                guard !Task.isCancelled else { return }
                weakSession?.retryWaitEnded(for: self, retryCount: retryCount)
                retryNow(endingWaitFor: retryCount)
            }
            let isCurrent = mutableState.withLock { state -> Bool in
                guard !state.machine.hasFinished, state.retryCount == retryCount else { return false }
                state.retryWait = sleep
                return true
            }
            // Finished, or a trigger started the retry already: nothing to wait for.
            if !isCurrent { sleep.cancel() }
        }
    }

    /// Starts the retry that follows retry number `retryCount`, unless it has started already
    /// (its delay ended and a trigger fired, whichever came second) or the request has finished.
    func retryNow(endingWaitFor retryCount: Int) {
        guard prepareForRetry(afterRetryCount: retryCount) else { return }
        startAttempt()
    }

    /// Readies the request for the attempt after retry number `retryCount` and returns `true`, or
    /// `false` if it was cancelled meanwhile or has moved past that count (an early retry already
    /// started this one). The previous attempt's response, body and error are cleared; its
    /// metrics stay. A delay still running is cancelled: nothing waits out a long delay in vain.
    private func prepareForRetry(afterRetryCount retryCount: Int) -> Bool {
        let (proceed, wait, checks) = mutableState.withLock {
            state -> (Bool, Task<Void, Never>?, [any SerializerChecking]) in
            guard state.retryCount == retryCount, state.machine.retry() == .startAttempt else {
                return (false, nil, [])
            }
            defer { state.retryWait = nil }
            state.retryCount += 1
            state.error = nil
            state.responseHead = nil
            state.data = nil
            state.bytesReceived = 0
            state.bytesExpected = -1
            state.bytesSent = 0
            state.bytesExpectedToSend = -1
            state.operationProgress = nil
            state.downloadReporter.reset()
            state.uploadReporter.reset()
            return (true, state.retryWait, state.serializerChecks)
        }
        wait?.cancel()
        // What the serializers made of the last attempt is stale now.
        checks.forEach { $0.forget() }
        if proceed {
            didPrepareRetry()
            monitor?.requestIsRetrying(self)
        }
        return proceed
    }
}
