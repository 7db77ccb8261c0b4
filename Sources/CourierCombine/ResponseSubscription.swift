import Foundation

/// The subscription of a ``DataResponsePublisher`` or ``DownloadResponsePublisher``: the first
/// demand adds the response handler and resumes the request; the response, then the end, go to
/// the subscriber once. Cancelling it cancels the request, and nothing is delivered after.
///
/// The subscriber is held type-erased: a class generic over a subscriber type (which need not
/// be `Sendable`) could not hand itself to the request's `@Sendable` handler.
final class ResponseSubscription<Output: Sendable>: Subscription, @unchecked Sendable {
    typealias Downstream = AnySubscriber<Output, Never>
    // @unchecked Sendable: `state` is behind its lock; the rest is constant and Sendable.
    private struct State {
        /// `nil` once the response was delivered or the subscription cancelled.
        var downstream: Downstream?
        var hasStarted = false
    }

    private let state: SubscriptionLock<State>
    private let courierRequest: Request
    private let addHandler: @Sendable (@escaping @Sendable (Output) -> Void) -> Void

    init(
        request: Request,
        downstream: Downstream,
        addHandler: @escaping @Sendable (@escaping @Sendable (Output) -> Void) -> Void
    ) {
        courierRequest = request
        state = SubscriptionLock(State(downstream: downstream))
        self.addHandler = addHandler
    }

    func request(_ demand: Subscribers.Demand) {
        guard demand > .none else { return }
        let starts = state.withLock { state -> Bool in
            guard state.downstream != nil, !state.hasStarted else { return false }
            state.hasStarted = true
            return true
        }
        guard starts else { return }
        addHandler { [self] response in
            guard
                let downstream = state.withLock({ state in
                    defer { state.downstream = nil }
                    return state.downstream
                })
            else { return }
            _ = downstream.receive(response)
            downstream.receive(completion: .finished)
        }
        courierRequest.resume()
    }

    func cancel() {
        state.withLock { $0.downstream = nil }
        courierRequest.cancel()
    }
}
