import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// How a request treats redirects: its own handler, limit and downgrade rule over the session's,
// and the redirects it followed. The following itself is its ``Attempt``'s (Request+Attempt.swift).
extension Request {
    /// Every redirect this request followed, in order, over all its attempts: each with the
    /// request redirected, the `3xx`, that exchange's metrics, and the request sent next.
    public var redirects: [Redirect] { mutableState.withLock { $0.redirects } }

    /// The handler that decides this request's redirects, if it has one of its own (set with
    /// ``redirect(using:)``); otherwise the session's decides.
    public var redirectHandler: (any RedirectHandler)? { mutableState.withLock { $0.redirectHandler } }

    /// Decides this request's redirects with `handler` in place of the session's: for example
    /// `.doNotFollow` to receive each `3xx` as the response. Set it before the request starts;
    /// an attempt under way keeps the handler it started with.
    @discardableResult
    public func redirect(using handler: any RedirectHandler) -> Self {
        mutableState.withLock { $0.redirectHandler = handler }
        return self
    }

    /// Lets this request follow at most `limit` redirects per attempt (the session's
    /// ``Session/Configuration/redirectLimit`` otherwise); one more fails it with
    /// ``CourierError/Kind/redirectFailed``. A negative limit counts as zero.
    @discardableResult
    public func redirect(limit: Int) -> Self {
        mutableState.withLock { $0.redirectLimit = max(0, limit) }
        return self
    }

    /// Lets this request follow a redirect from `https` to plain `http` (`true`), or refuses one
    /// (`false`), whatever the session's ``Session/Configuration/allowsInsecureRedirects`` says.
    @discardableResult
    public func redirect(allowingInsecureRedirects allowed: Bool) -> Self {
        mutableState.withLock { $0.allowsInsecureRedirects = allowed }
        return self
    }

    /// Holds the transfer back (`true`) for `reason`, or lets go of that hold: what an attempt
    /// does while it replays a declined redirect faster than the request takes it, and what a
    /// request does while an `onHTTPResponse` handler decides.
    /// With `attempt`, only while it is the current one: a late word from an earlier attempt
    /// must not release (or set) the next one's hold.
    func holdTransferBack(_ hold: Bool, for reason: StateMachine.HoldReasons, by attempt: Attempt? = nil) {
        let changed = mutableState.withLock { state -> Bool in
            if let attempt, state.attempt !== attempt { return false }
            return state.machine.holdBack(hold, for: reason)
        }
        if changed { applyStateToTask() }
    }

    /// Records `redirect`, about to be followed by `attempt`, and tells the monitor; returns
    /// `false`, recording nothing, if the attempt is no longer current or the request has ended.
    func willFollow(_ redirect: Redirect, in attempt: Attempt) -> Bool {
        let isCurrent = mutableState.withLock { state -> Bool in
            guard state.attempt === attempt, !state.machine.hasFinished else { return false }
            state.redirects.append(redirect)
            return true
        }
        if isCurrent { monitor?.request(self, willFollow: redirect) }
        return isCurrent
    }

    /// The transport made `task` for the next exchange of `attempt` (a redirect followed, or a
    /// challenge answered): it
    /// becomes the request's task, and runs, waits or is cancelled as the state says.
    func didCreateTask(_ task: any TransportTask, forNextExchangeIn attempt: Attempt) {
        let (action, snapshot) = mutableState.withLock { state -> (StateMachine.TaskAction, TaskSnapshot?) in
            guard state.attempt === attempt else { return (.cancel, nil) }
            let action = state.machine.redirectTaskCreated()
            guard action != .cancel else { return (action, nil) }
            state.task = task
            return (action, state.taskSnapshot(unlessAt: nil))
        }
        switch action {
        case .resume: applyStateToTask(startingWith: snapshot)
        case .leaveSuspended: break
        case .cancel: task.cancel()
        }
    }
}
