/// A finished ``DataRequest``'s outcome, serialized once, by the first task that awaits it: what
/// ``DataTask`` waits on.
///
/// The request hands over its raw outcome where it finishes (an event loop, often) and no
/// serializer runs there; the awaiting task, already on Swift's cooperative pool, serializes.
/// Later awaits get the same response.
///
/// `@unchecked Sendable`: the one mutable member, `serialized`, sits behind one lock; the rest is
/// immutable or thread-safe.
final class SerializedOutcome<Value: Sendable>: @unchecked Sendable {
    private let outcome = ResponseFuture<DataRequest.Outcome>()
    private let serialize: @Sendable (DataRequest.Outcome) -> DataResponse<Value, CourierError>
    private let serialized = Protected<DataResponse<Value, CourierError>?>(nil)

    init(serialize: @escaping @Sendable (DataRequest.Outcome) -> DataResponse<Value, CourierError>) {
        self.serialize = serialize
    }

    /// Records what the request produced; later calls are ignored.
    func fulfil(with outcome: DataRequest.Outcome) {
        self.outcome.fulfil(with: outcome)
    }

    /// The serialized response, once the request has finished.
    var response: DataResponse<Value, CourierError> {
        get async {
            if let done = serialized.withLock({ $0 }) { return done }
            let response = serialize(await outcome.value)
            // Two tasks that awaited at once both serialized; the first one stored wins.
            return serialized.withLock { stored in
                if let stored { return stored }
                stored = response
                return response
            }
        }
    }
}
