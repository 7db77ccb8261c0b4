import Foundation

// Alamofire 5.11's per-request modifiers: interceptors and event monitors added to a request
// after it was made.
extension Request {
    /// Adds `interceptor` to this request's own, after those it has: it adapts the attempts
    /// made from now on and joins the retry decisions, as Alamofire 5.11's modifier. Call it
    /// before the request starts for it to adapt the first attempt.
    @discardableResult
    public func interceptor(_ interceptor: any RequestInterceptor) -> Self {
        let retries = Session.retries(interceptor)
        mutableState.withLock { state in
            state.addedInterceptors.append(interceptor)
            if retries { state.hasAddedRetrier = true }
        }
        return self
    }

    /// Adds `monitor`, told of this request's events after the session's monitors, as Alamofire
    /// 5.11's `eventMonitor(_:)`: for logging or metrics that concern one request, not every
    /// request of the session.
    ///
    /// The monitor hears the events that happen from now on, so add it before the request
    /// starts to hear them all (``EventMonitor/requestDidCreate(_:)`` is the session's alone: it
    /// has happened by then). It stays with the request for as long as the request exists, since
    /// parse events can come after the request finishes: a monitor that keeps the request
    /// keeps it alive.
    ///
    /// A ``RequestContextPropagator`` that is already one of the session's monitors is not added
    /// again: it keeps per-request state, and hearing each event twice would corrupt it.
    @discardableResult
    public func eventMonitor(_ monitor: any EventMonitor) -> Self {
        if let propagator = monitor as? any RequestContextPropagator,
            capturedContexts.contains(where: { $0.propagator === propagator })
        {
            return self
        }
        let sessionMonitors = sessionEventMonitor?.monitors ?? []
        mutableState.withLock { state in
            state.addedEventMonitors.append(monitor)
            state.eventMonitor = CompositeEventMonitor(monitors: sessionMonitors + state.addedEventMonitors)
        }
        // After the monitor is in place: a reader seeing the mark finds it under the lock.
        mutableState.mark()
        return self
    }

    /// Adds `adapter` to this request's own interceptors, as ``interceptor(_:)`` does.
    @discardableResult
    public func adapt(using adapter: any RequestAdapter) -> Self {
        interceptor(Interceptor(adapters: [adapter]))
    }

    /// Adds `retrier` to this request's own interceptors, as ``interceptor(_:)`` does: it is
    /// asked after the ones added before it.
    @discardableResult
    public func retry(using retrier: any RequestRetrier) -> Self {
        interceptor(Interceptor(retriers: [retrier]))
    }
}
