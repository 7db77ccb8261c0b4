/// A finished ``DataRequest``'s outcome, serialized once, by the first task that awaits it: what
/// ``DataTask`` waits on.
///
/// The request hands over its raw outcome where it finishes (an event loop, often) and no
/// serializer runs there; the first awaiting task is resumed straight from there (the one hop
/// after the last byte), runs the serializer, and every other awaiter gets its response.
///
/// While that task waits, the request may also hand it an attempt's validation when a validator
/// closure of the caller's must run (``runValidation(_:)``): user code then runs in the awaiting
/// task too, rather than on a queue between the transport and the caller, and the task goes back
/// to waiting for the outcome (a failed validation may lead to a retry).
///
/// All mutable state (the outcome, the claim, the response and the waiters) sits behind the
/// request's own lock, shared rather than a second lock per request: it is taken only where the
/// request's state is not held (the request hands over its outcome and validations after
/// unlocking). The continuations are unsafe ones (no checking allocation): each is stored or
/// resumed under that lock exactly once, so none is resumed twice or dropped.
///
/// What does not depend on `Value` is kept in a state of its own type, outside the generic class:
/// the class's code is generic code the caller's module calls unspecialized, where every use of a
/// type made from `Value` looks its metadata up in the runtime's cache (some 300 instructions
/// each, a dozen a request before). The usual request, awaited once, now touches the response's
/// type only to make it and to keep it.
final class SerializedOutcome<Value: Sendable>: Sendable {
    typealias Response = DataResponse<Value, CourierError>

    private let state: Protected<SerializedOutcomeState>
    private let serialize: @Sendable (DataRequest.Outcome) -> Response
    /// The serialized response, once the claiming awaiter has made it. Read and written only
    /// under `state`'s lock, which is what makes the unchecked access sound.
    private nonisolated(unsafe) var served: Response?
    /// The other awaiters, waiting for the response. Read and written only under `state`'s lock.
    private nonisolated(unsafe) var waiters: [UnsafeContinuation<Response, Never>] = []

    /// An outcome whose state shares `requestState`'s lock.
    init<RequestState>(
        sharingLockWith requestState: Protected<RequestState>,
        serialize: @escaping @Sendable (DataRequest.Outcome) -> Response
    ) {
        state = Protected(SerializedOutcomeState(), sharingLockWith: requestState)
        self.serialize = serialize
    }

    /// Records what the request produced, resuming the claiming awaiter if one waits; later
    /// calls are ignored.
    func fulfil(with outcome: DataRequest.Outcome) {
        let serializer = state.withLock { state -> UnsafeContinuation<Wake, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.serializer = nil }
            return state.serializer
        }
        serializer?.resume(returning: .outcome(outcome))
    }

    /// Hands `validation` to the claiming awaiter and returns `true` if a task has claimed the
    /// serializing: it runs the validation now if it waits, or as soon as it does (it is on its
    /// way, or finishing the last one). Returns `false` (the caller then runs it elsewhere) if no
    /// task awaits yet, or the request has finished.
    func runValidation(_ validation: @escaping @Sendable () -> Void) -> Bool {
        let handover = state.withLock { state -> Handover in
            guard state.outcome == nil, state.isClaimed, state.pendingValidation == nil else { return .refused }
            guard let serializer = state.serializer else {
                state.pendingValidation = validation
                return .queued
            }
            state.serializer = nil
            return .wake(serializer)
        }
        switch handover {
        case .refused: return false
        case .queued: return true
        case .wake(let serializer):
            serializer.resume(returning: .validate(validation))
            return true
        }
    }

    /// Waits until the request has finished, running whatever validation it hands over meanwhile.
    /// A finished request's outcome wins over a validation still pending: the validation could
    /// only finish the request, which has finished.
    private func awaitOutcome() async -> DataRequest.Outcome {
        while true {
            let wake = await withUnsafeContinuation { continuation in
                let ready = state.withLock { state -> Wake? in
                    if let outcome = state.outcome { return .outcome(outcome) }
                    if let validation = state.pendingValidation {
                        state.pendingValidation = nil
                        return .validate(validation)
                    }
                    state.serializer = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
            switch wake {
            case .outcome(let outcome):
                // Released after unlocking: the validators it holds are the caller's closures,
                // and what they captured may call the request from its deinit.
                let dropped = state.withLock { state in
                    defer { state.pendingValidation = nil }
                    return state.pendingValidation
                }
                _ = dropped
                return outcome
            case .validate(let validation):
                validation()
            }
        }
    }

    /// The serialized response, once the request has finished.
    var response: Response {
        get async {
            let claims = state.withLock { state -> Bool in
                guard !state.isClaimed else { return false }
                state.isClaimed = true
                return true
            }
            guard claims else { return await servedResponse() }
            let response = serialize(await awaitOutcome())
            let hasWaiters = state.withLock { state -> Bool in
                served = response
                return state.hasWaiters
            }
            if hasWaiters {
                let waiting = state.withLock { _ -> [UnsafeContinuation<Response, Never>] in
                    defer { waiters = [] }
                    return waiters
                }
                waiting.forEach { $0.resume(returning: response) }
            }
            return response
        }
    }

    /// The response the claiming awaiter makes (or made), for every other awaiter.
    private func servedResponse() async -> Response {
        await withUnsafeContinuation { continuation in
            let ready = state.withLock { state -> Response? in
                if let served { return served }
                state.hasWaiters = true
                waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// What a ``SerializedOutcome`` keeps that does not depend on its value's type.
private struct SerializedOutcomeState {
    /// What the request produced, once it has finished.
    var outcome: DataRequest.Outcome?
    /// Whether an awaiter has taken on the serializing.
    var isClaimed = false
    /// Whether any awaiter other than the claiming one waits for the response.
    var hasWaiters = false
    /// The claiming awaiter, waiting for the outcome (or a validation to run).
    var serializer: UnsafeContinuation<Wake, Never>?
    /// A validation handed over while the claiming awaiter was not yet waiting (or was busy
    /// with the last one): it runs it before it waits again.
    var pendingValidation: (@Sendable () -> Void)?
}

/// What wakes the claiming awaiter of a ``SerializedOutcome``. Outside the generic class, so
/// that using it looks up no generic metadata per request.
private enum Wake: Sendable {
    /// The request finished: serialize.
    case outcome(DataRequest.Outcome)
    /// Run an attempt's validation, then wait again.
    case validate(@Sendable () -> Void)
}

/// What `SerializedOutcome.runValidation(_:)` does with a validation.
private enum Handover {
    case refused, queued
    case wake(UnsafeContinuation<Wake, Never>)
}
