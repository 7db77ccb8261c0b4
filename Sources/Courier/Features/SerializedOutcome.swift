/// A finished ``DataRequest``'s outcome, serialized once, by the first task that awaits it: what
/// ``DataTask`` waits on.
///
/// The request hands over its raw outcome where it finishes (an event loop, often) and no
/// serializer runs there; the first awaiting task is resumed straight from there (the one hop
/// after the last byte), runs the serializer, and every other awaiter gets its response.
///
/// `@unchecked Sendable`: the one mutable member, `state`, sits behind one lock (the only one:
/// the outcome, the claim and the waiters share it); `serialize` is immutable and `Sendable`.
/// The continuations are unsafe ones (no checking allocation): each is stored or resumed under
/// that lock exactly once, so none is resumed twice or dropped.
final class SerializedOutcome<Value: Sendable>: @unchecked Sendable {
    typealias Response = DataResponse<Value, CourierError>

    private struct State {
        /// What the request produced, once it has finished.
        var outcome: DataRequest.Outcome?
        /// The serialized response, once the claiming awaiter has made it.
        var response: Response?
        /// Whether an awaiter has taken on the serializing.
        var isClaimed = false
        /// The claiming awaiter, waiting for the outcome.
        var serializer: UnsafeContinuation<DataRequest.Outcome, Never>?
        /// The other awaiters, waiting for the response.
        var waiters: [UnsafeContinuation<Response, Never>] = []
    }

    private let state = Protected(State())
    private let serialize: @Sendable (DataRequest.Outcome) -> Response

    init(serialize: @escaping @Sendable (DataRequest.Outcome) -> Response) {
        self.serialize = serialize
    }

    /// Records what the request produced, resuming the claiming awaiter if one waits; later
    /// calls are ignored.
    func fulfil(with outcome: DataRequest.Outcome) {
        let serializer = state.withLock { state -> UnsafeContinuation<DataRequest.Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.serializer = nil }
            return state.serializer
        }
        serializer?.resume(returning: outcome)
    }

    private enum Role {
        case ready(Response)
        case serializes
        case waits
    }

    /// The serialized response, once the request has finished.
    var response: Response {
        get async {
            let role = state.withLock { state -> Role in
                if let response = state.response { return .ready(response) }
                if state.isClaimed { return .waits }
                state.isClaimed = true
                return .serializes
            }
            switch role {
            case .ready(let response):
                return response
            case .waits:
                return await withUnsafeContinuation { continuation in
                    let ready = state.withLock { state -> Response? in
                        if let response = state.response { return response }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            case .serializes:
                let outcome = await withUnsafeContinuation { continuation in
                    let ready = state.withLock { state -> DataRequest.Outcome? in
                        if let outcome = state.outcome { return outcome }
                        state.serializer = continuation
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
                let response = serialize(outcome)
                let waiters = state.withLock { state -> [UnsafeContinuation<Response, Never>] in
                    state.response = response
                    defer { state.waiters = [] }
                    return state.waiters
                }
                waiters.forEach { $0.resume(returning: response) }
                return response
            }
        }
    }
}
