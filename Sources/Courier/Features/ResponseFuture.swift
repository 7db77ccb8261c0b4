/// A value that arrives once and is awaited any number of times, by any number of tasks: what
/// ``DataTask`` and ``DownloadTask`` wait on.
///
/// Cheaper than wrapping the wait in a `Task`: no task is made per request, and the waiters are
/// resumed straight from wherever the value arrives.
final class ResponseFuture<Response: Sendable>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Response, Never>])
        case fulfilled(Response)
    }

    /// Behind the request's own lock, shared rather than one more lock per request: the value
    /// arrives in a handler, where the request's state is not held.
    private let state: Protected<State>

    /// A future whose state shares `requestState`'s lock.
    init<RequestState>(sharingLockWith requestState: Protected<RequestState>) {
        state = Protected(.waiting([]), sharingLockWith: requestState)
    }

    /// Records the response and resumes every waiter; later calls are ignored.
    func fulfil(with response: Response) {
        let waiters = state.withLock { state -> [CheckedContinuation<Response, Never>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .fulfilled(response)
            return waiters
        }
        waiters.forEach { $0.resume(returning: response) }
    }

    /// The response, once it has arrived.
    var value: Response {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Response? in
                    switch state {
                    case .waiting(let waiters):
                        state = .waiting(waiters + [continuation])
                        return nil
                    case .fulfilled(let response):
                        return response
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
