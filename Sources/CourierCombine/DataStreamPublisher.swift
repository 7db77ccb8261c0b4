import Foundation

/// Publishes a `DataStreamRequest`'s body as it arrives, each piece serialized, then a
/// `.complete` event, then finishes: Alamofire's `DataStreamPublisher`. Make one with
/// `publishStream(using:on:)`, `publishData()`, `publishString()` or `publishDecodable(type:)`.
///
/// Unlike Alamofire's, it honours the subscriber's demand: a piece is taken from the transfer
/// only when one is asked for, and past `bufferLimit` bytes waiting the transfer is held back
/// (as `streamingData()` does), so a slow subscriber slows the download instead of filling
/// memory. The request starts at the first demand; cancelling the subscription cancels it.
public struct DataStreamPublisher<Value: Sendable>: Publisher, Sendable {
    /// One event: a serialized piece (or why it could not be), or the end.
    public typealias Output = DataStreamRequest.Stream<Value, CourierError>
    /// Never: failures are events.
    public typealias Failure = Never

    private let request: DataStreamRequest
    private let queue: DispatchQueue
    private let makeSequence: @Sendable () -> DataStreamSequence<Result<Value, CourierError>>

    /// A publisher of `request`'s pieces, serialized by `serializer` and delivered on `queue`,
    /// holding the transfer back past `bufferLimit` bytes waiting for demand.
    public init<Serializer: DataStreamSerializer>(
        _ request: DataStreamRequest,
        queue: DispatchQueue,
        serializer: Serializer,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) where Value == Serializer.SerializedObject {
        self.request = request
        self.queue = queue
        makeSequence = { request.streamingResponses(serializedUsing: serializer, bufferLimit: bufferLimit) }
    }

    /// Each piece's `Result`: the `.complete` event becomes a failure if the stream failed, else nothing.
    public func result() -> AnyPublisher<Result<Value, CourierError>, Never> {
        compactMap { stream in
            switch stream.event {
            case .stream(let result): result
            case .complete(let completion): completion.error.map { .failure($0) }
            }
        }
        .eraseToAnyPublisher()
    }

    /// Each piece's value; a piece that could not be serialized, or the stream's failure, fails it.
    public func value() -> AnyPublisher<Value, CourierError> {
        // One piece at a time, so the subscriber's demand still reaches the stream.
        result().setFailureType(to: CourierError.self).flatMap(maxPublishers: .max(1)) { $0.publisher }
            .eraseToAnyPublisher()
    }

    /// Attaches `subscriber`; the request starts at its first demand.
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        subscriber.receive(
            subscription: StreamSubscription(
                request: request,
                queue: queue,
                downstream: AnySubscriber(subscriber),
                makeSequence: makeSequence
            )
        )
    }
}

/// The subscription of a ``DataStreamPublisher``: a task pulls the next piece from the stream's
/// sequence only while the subscriber has demand, and hands each on `queue`.
/// The subscriber is held type-erased, as in ``ResponseSubscription``.
final class StreamSubscription<Value: Sendable>: Subscription, @unchecked Sendable {
    typealias Downstream = AnySubscriber<DataStreamRequest.Stream<Value, CourierError>, Never>
    // @unchecked Sendable: `state` is behind its lock; the rest is constant and Sendable.
    private struct State {
        /// `nil` once finished or cancelled.
        var downstream: Downstream?
        var demand = Subscribers.Demand.none
        /// The pulling task, waiting here for demand.
        var waiter: CheckedContinuation<Bool, Never>?
        /// Set by the first demand, with the decision to start pulling: one task, however many
        /// demands race in before it is stored.
        var hasStarted = false
        var pulling: Task<Void, Never>?
    }

    private let state: SubscriptionLock<State>
    private let courierRequest: DataStreamRequest
    private let queue: DispatchQueue
    private let makeSequence: @Sendable () -> DataStreamSequence<Result<Value, CourierError>>

    init(
        request: DataStreamRequest,
        queue: DispatchQueue,
        downstream: Downstream,
        makeSequence: @escaping @Sendable () -> DataStreamSequence<Result<Value, CourierError>>
    ) {
        courierRequest = request
        self.queue = queue
        self.makeSequence = makeSequence
        state = SubscriptionLock(State(downstream: downstream))
    }

    func request(_ demand: Subscribers.Demand) {
        guard demand > .none else { return }
        let (waiter, starts) = state.withLock { state -> (CheckedContinuation<Bool, Never>?, Bool) in
            guard state.downstream != nil else { return (nil, false) }
            state.demand += demand
            defer {
                state.waiter = nil
                state.hasStarted = true
            }
            return (state.waiter, !state.hasStarted)
        }
        waiter?.resume(returning: true)
        guard starts else { return }
        let pulling = Task { await pull() }
        let isOver = state.withLock { state -> Bool in
            guard state.downstream != nil else { return true }
            state.pulling = pulling
            return false
        }
        if isOver { pulling.cancel() }
    }

    func cancel() {
        let (waiter, pulling) = state.withLock { state in
            defer {
                state.downstream = nil
                state.waiter = nil
                state.pulling = nil
            }
            return (state.waiter, state.pulling)
        }
        waiter?.resume(returning: false)
        pulling?.cancel()
        courierRequest.cancel()
    }

    /// Pulls a piece per unit of demand until the stream ends or the subscription is cancelled.
    private func pull() async {
        // Made before the request runs: an iterator sees what arrives after it was made. Resumed
        // here, as Alamofire's publishers do, so a request made not to start on its own (or
        // suspended) starts once there is demand.
        var pieces = makeSequence().makeAsyncIterator()
        courierRequest.resume()
        do {
            while await demandArrived() {
                guard let piece = try await pieces.next() else { break }
                guard await deliver(.stream(piece)) else { return }
            }
        } catch {
            // The sequence threw the request's error; the completion below carries it.
        }
        _ = await deliver(.complete(DataStreamRequest.Completion(of: courierRequest)), isLast: true)
    }

    /// Waits until the subscriber has demand; `false` once cancelled.
    private func demandArrived() async -> Bool {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool? in
                guard state.downstream != nil else { return false }
                if state.demand > .none { return true }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Hands `event` to the subscriber on `queue`, and records the demand it adds; `false` if
    /// the subscription has ended. The last event finishes the subscriber too.
    private func deliver(_ event: DataStreamRequest.Event<Value, CourierError>, isLast: Bool = false) async -> Bool {
        let stream = DataStreamRequest.Stream(event: event, request: courierRequest)
        return await withCheckedContinuation { continuation in
            queue.async { [self] in
                let downstream = state.withLock { state -> Downstream? in
                    guard let downstream = state.downstream else { return nil }
                    if isLast {
                        state.downstream = nil
                    } else if state.demand > .none {
                        // Always so (a piece is pulled only on demand); checked, as Combine traps below zero.
                        state.demand -= 1
                    }
                    return downstream
                }
                guard let downstream else {
                    continuation.resume(returning: false)
                    return
                }
                let more = downstream.receive(stream)
                if isLast {
                    downstream.receive(completion: .finished)
                } else if more > .none {
                    state.withLock { $0.demand += more }
                }
                continuation.resume(returning: true)
            }
        }
    }
}

extension DataStreamRequest {
    /// A publisher of the pieces serialized by `serializer`, delivered on `queue`.
    public func publishStream<Serializer: DataStreamSerializer>(
        using serializer: Serializer,
        on queue: DispatchQueue = .courierCallbacks,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) -> DataStreamPublisher<Serializer.SerializedObject> {
        DataStreamPublisher(self, queue: queue, serializer: serializer, bufferLimit: bufferLimit)
    }

    /// A publisher of the pieces as `Data`.
    public func publishData(
        queue: DispatchQueue = .courierCallbacks,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) -> DataStreamPublisher<Data> {
        publishStream(using: PassthroughStreamSerializer(), on: queue, bufferLimit: bufferLimit)
    }

    /// A publisher of the pieces as UTF-8 text.
    public func publishString(
        queue: DispatchQueue = .courierCallbacks,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) -> DataStreamPublisher<String> {
        publishStream(using: StringStreamSerializer(), on: queue, bufferLimit: bufferLimit)
    }

    /// A publisher of each piece decoded as `type`.
    public func publishDecodable<T: Decodable & Sendable>(
        type: T.Type = T.self,
        queue: DispatchQueue = .courierCallbacks,
        decoder: any DataDecoder = JSONDecoder(),
        preprocessor: any DataPreprocessor = PassthroughPreprocessor(),
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) -> DataStreamPublisher<T> {
        publishStream(
            using: DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: preprocessor),
            on: queue,
            bufferLimit: bufferLimit
        )
    }
}
