import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response handler whose serializer runs before the request finishes, so that a failure can
/// be offered to the retriers, as Alamofire offers every failing serializer's: a body that does
/// not decode (an empty `500` nobody validated, say) can then be retried. The result is kept for
/// the handler, which uses it rather than serializing again. Data and upload requests check
/// their outcome; downloads check their file once it is at its destination.
///
/// Made only when the request or its session had a retrier when the request was made, or the
/// request was given one (`retry(using:)`) before the handler was added: without one,
/// serializers run where they always do, after the request has finished, and an awaited
/// `serializing…` call serializes in the awaiting task. With one, serializers run on the
/// request's serialization queue before it finishes. `didParseResponse` reports the result a
/// handler receives, not a parse that led to a retry.
protocol SerializerChecking: AnyObject, Sendable {
    /// Serializes `input` (what the request's handlers serialize: a data request's outcome, a
    /// download's), keeps the result for the handler, and returns its failure, if any.
    func check(_ input: any Sendable) -> CourierError?
    /// Replaces a kept failure with the retriers' refusal (`requestRetryFailed`).
    func refuseRetry(_ error: CourierError)
    /// Drops the kept result: the request is retried, and the next attempt serializes afresh.
    func forget()
}

/// One handler's serializer, of what its request hands its handlers (`Input`), and its kept result.
final class SerializerCheck<Input: Sendable, Value: Sendable>: SerializerChecking {
    typealias Serialized = (result: Result<Value, CourierError>, duration: TimeInterval)

    private let serialize: @Sendable (Input) -> Serialized
    private let kept = Protected<Serialized?>(nil)

    init(_ serialize: @escaping @Sendable (Input) -> Serialized) {
        self.serialize = serialize
    }

    func check(_ input: any Sendable) -> CourierError? {
        // A request hands every check of its own the one input type its handlers use.
        guard let input = input as? Input else {
            assertionFailure("a serializer check of \(Input.self) was handed \(type(of: input))")
            return nil
        }
        let serialized = serialize(input)
        kept.withLock { $0 = serialized }
        guard case .failure(let error) = serialized.result else { return nil }
        return error
    }

    func refuseRetry(_ error: CourierError) {
        kept.withLock { kept in
            if let duration = kept?.duration { kept = (.failure(error), duration) }
        }
    }

    func forget() {
        kept.withLock { $0 = nil }
    }

    /// The kept result, for a request that finished without an error (`failed` is `false`: a
    /// cancel after the check must not be answered with a value), once; `nil` to serialize now.
    func take(failed: Bool) -> Serialized? {
        let taken = kept.withLock { kept in
            defer { kept = nil }
            return kept
        }
        return failed ? nil : taken
    }
}

extension DataRequest {
    /// `serializer` run on a request's outcome, timed: what a response handler does, and what
    /// its ``SerializerCheck`` does before the request finishes.
    static func serialize<Serializer: DataResponseSerializerProtocol>(
        _ outcome: Outcome,
        with serializer: Serializer
    ) -> SerializerCheck<Outcome, Serializer.SerializedObject>.Serialized {
        measuredSerialization {
            try serializer.serialize(
                requestHead: outcome.request,
                head: outcome.head,
                data: outcome.data,
                error: outcome.error
            )
        }
    }

    /// A check for a handler's serializer, registered with the request, when a retrier could act
    /// on its failure; `nil` (nothing to do) otherwise, or once the request has finished.
    func serializerCheck<Serializer: DataResponseSerializerProtocol>(
        for serializer: Serializer
    ) -> SerializerCheck<Outcome, Serializer.SerializedObject>? {
        registerSerializerCheck { Self.serialize($0, with: serializer) }
    }

    /// The request succeeded: its serializers' failures are offered to the retriers first.
    func checkSerializersThenFinish() {
        checkSerializersThenFinish(input: { [self] in outcome() })
    }
}

extension Request {
    /// Registers a check running `serialize` before the request finishes, when a retrier could
    /// act on its failure; `nil` (nothing to do) otherwise, or once the request has finished.
    func registerSerializerCheck<Input: Sendable, Value: Sendable>(
        _ serialize: @escaping @Sendable (Input) -> SerializerCheck<Input, Value>.Serialized
    ) -> SerializerCheck<Input, Value>? {
        // Decided when the request was made, without an allocation: without a retrier the hot
        // path pays one look at the state, for one added since (`retry(using:)`).
        if !mayRetrySerializerFailures {
            guard mutableState.withLock({ $0.hasAddedRetrier }) else { return nil }
        }
        let check = SerializerCheck(serialize)
        let isRegistered = mutableState.withLock { state -> Bool in
            guard !state.machine.hasFinished else { return false }
            state.serializerChecks.append(check)
            return true
        }
        return isRegistered ? check : nil
    }

    /// The request succeeded: before it finishes, the serializers registered for a retry
    /// decision run on the serialization queue, on what `input` reads then, and the first
    /// failure that a retrier wants retried starts the next attempt instead. A refusal with an
    /// error stays with that handler. Handlers added while the checks run are not offered: they
    /// serialize when the request has finished.
    func checkSerializersThenFinish(input: @escaping @Sendable () -> any Sendable) {
        let canRetry = self.canRetry
        // One look at the state: finished at once, or held for the checks.
        let checks = finishWithoutError { state -> [any SerializerChecking]? in
            guard canRetry, !state.serializerChecks.isEmpty, state.machine.awaitSerializerChecks() else { return nil }
            return state.serializerChecks
        }
        guard let checks else { return }
        serializationQueue.async { [self] in
            runSerializerChecks(checks, from: 0, input: input())
        }
    }

    /// Runs `checks` from `index` on; asks the retriers about the first failure, and goes on
    /// with the rest when they decline.
    private func runSerializerChecks(
        _ checks: [any SerializerChecking],
        from index: Int,
        input: any Sendable
    ) {
        for position in index..<checks.count {
            guard !hasFinished else { return }
            guard let failure = checks[position].check(input) else { continue }
            guard let plan = weakSession?.retryPlan(for: self) else { break }
            Session.decideRetry(of: self, by: plan.retrier, budget: plan.budget, dueTo: failure) { [self] result in
                let goOn: @Sendable () -> Void = { [self] in
                    serializationQueue.async { [self] in
                        runSerializerChecks(checks, from: position + 1, input: input)
                    }
                }
                switch result {
                case .retry, .retryWithDelay:
                    // Kept results are dropped when the next attempt starts (`prepareForRetry`);
                    // a retry that cannot happen (past the deadline) goes on as a refusal would.
                    retry(afterDelay: result.delay, dueTo: failure, otherwise: goOn)
                case .doNotRetry, .doNotRetryWithError:
                    if case .doNotRetryWithError(let retryError) = result {
                        checks[position].refuseRetry(
                            .requestRetryFailed(retryError: retryError, originalError: failure)
                        )
                    }
                    goOn()
                }
            }
            return
        }
        finish()
    }
}
