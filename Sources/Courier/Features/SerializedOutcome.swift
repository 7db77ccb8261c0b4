/// A finished ``DataRequest``'s outcome, serialized once, by the first task that awaits it: what
/// ``DataTask`` waits on.
///
/// The request hands over its raw outcome where it finishes (an event loop, often) and no
/// serializer runs there; the first awaiting task, already on Swift's cooperative pool, runs the
/// serializer, and every other awaiter gets its response.
///
/// `@unchecked Sendable`: the one mutable member, `isClaimed`, sits behind one lock; the rest is
/// immutable or thread-safe.
final class SerializedOutcome<Value: Sendable>: @unchecked Sendable {
    private let outcome = ResponseFuture<DataRequest.Outcome>()
    private let serialized = ResponseFuture<DataResponse<Value, CourierError>>()
    private let serialize: @Sendable (DataRequest.Outcome) -> DataResponse<Value, CourierError>
    /// Whether an awaiter has taken on the serializing.
    private let isClaimed = Protected(false)

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
            let serializes = isClaimed.withLock { claimed -> Bool in
                defer { claimed = true }
                return !claimed
            }
            if serializes { serialized.fulfil(with: serialize(await outcome.value)) }
            return await serialized.value
        }
    }
}
