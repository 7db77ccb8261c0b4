import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `repeated()` (Siesta's `Request.repeated()`): a new request doing the same work, unstarted,
// with the settings of this one and none of its handlers.
extension Request {
    /// The session to make a repeat on: this request's, or, once that is gone, one that fails
    /// every request with ``CourierError/Kind/sessionInvalidated`` (as the gone session would).
    var sessionForRepeat: Session { weakSession ?? Session.gone }

    /// Gives `again` this request's settings: the interceptors and event monitors added since it
    /// was made, its start choice, redirect, credential and cache settings. Not its validators, handlers,
    /// hooks or progress handlers: a repeat starts clean, as in Siesta.
    func copySettings(to again: Request) {
        // One made on a gone session has finished already: nothing to give it.
        guard !again.isFinished else { return }
        let settings = mutableState.withLock { state in
            (
                state.addedInterceptors, state.hasAddedRetrier, state.shouldAutomaticallyResume,
                state.redirectHandler, state.redirectLimit, state.allowsInsecureRedirects,
                state.credential, state.cacheMode, state.cachedResponseHandler
            )
        }
        again.mutableState.withLock { state in
            (
                state.addedInterceptors, state.hasAddedRetrier, state.shouldAutomaticallyResume,
                state.redirectHandler, state.redirectLimit, state.allowsInsecureRedirects,
                state.credential, state.cacheMode, state.cachedResponseHandler
            ) = settings
            // A finished request let go of its added interceptors (see `DataRequest.repeated()`).
            state.hasAddedRetrier = state.hasAddedRetrier && !state.addedInterceptors.isEmpty
        }
        for monitor in mutableState.withLock({ $0.addedEventMonitors }) { again.eventMonitor(monitor) }
    }
}

extension Session {
    /// A session that is invalidated from the start: where a request whose session is gone
    /// makes its repeat, which then fails as the gone session's requests did.
    static let gone: Session = {
        let session = Session(transport: GoneTransport())
        session.markInvalidated()
        return session
    }()
}

/// The transport of ``Session/gone``: its requests fail before any task is made, so this
/// makes none that run.
private struct GoneTransport: Transport {
    func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    )
        -> any TransportTask
    {
        FailedTransportTask(error: URLError(.cancelled), eventHandler: eventHandler)
    }

    func invalidate() async {}
}
