import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries a request that failed because the machine is offline once connectivity may have
/// returned, waiting at most ``maximumWait``: Alamofire 5.11's `OfflineRetrier`, on Linux too.
///
/// ```swift
/// let session = Session(interceptor: .offlineRetrier(maximumWait: .seconds(10)))
/// ```
///
/// It waits for its ``RetryTrigger`` to fire: by default a ``NetworkMonitor``, which fires when
/// a link comes up, an address or a default route is added (Linux), or the path becomes
/// satisfied (Apple platforms); any event ends the wait. A request that is not offline (see
/// ``isOfflineError``) is left to the next retrier; one whose wait runs out (`maximumWait`, for
/// each failure) fails with its own error. As in Alamofire there is no retry limit: a request
/// that fails offline again after an event waits again; ``Session/Configuration/requestDeadline``
/// bounds it overall. Cancelling the request stops the wait.
///
/// Both transports report a machine without a network as `URLError(.notConnectedToInternet)`,
/// the default's offline code, as Apple's URLSession does.
///
/// Different from Alamofire's on purpose: Courier's monitor reports changes, so a request that
/// fails offline while the network already looks up (a captive portal, say) waits for the next
/// change or the end of `maximumWait`, where Alamofire's `NWPathMonitor` would retry at once. It
/// takes any ``RetryTrigger``, not an `NWPathMonitor`.
public final class OfflineRetrier: RequestInterceptor {
    /// How long a request waits for connectivity by default: 5 seconds.
    public static let defaultWait: Duration = .seconds(5)

    /// The `URLError` codes that mean "offline" by default: `notConnectedToInternet`, as Alamofire's.
    public static let defaultURLErrorOfflineCodes: Set<URLError.Code> = [.notConnectedToInternet]

    /// Whether an error means the machine is offline, by default: a transport failure (or a
    /// `URLError`) whose code is in ``defaultURLErrorOfflineCodes``.
    public static let defaultIsOfflineError: @Sendable (_ error: any Error) -> Bool = { error in
        if let error = error as? CourierError {
            return error.urlError.map { defaultURLErrorOfflineCodes.contains($0.code) } ?? false
        }
        if let error = error as? URLError { return defaultURLErrorOfflineCodes.contains(error.code) }
        return false
    }

    /// The longest a request waits for connectivity before it fails with its own error.
    public let maximumWait: Duration
    /// Decides whether a failure means the machine is offline; `false` leaves the request to the
    /// next retrier, if any.
    public let isOfflineError: @Sendable (_ error: any Error) -> Bool
    /// What says connectivity may have returned.
    public let trigger: any RetryTrigger

    /// Creates a retrier that waits on `trigger`.
    ///
    /// - Parameters:
    ///   - trigger: What says connectivity may have returned; a ``NetworkMonitor`` by default
    ///     (which watches only while a request waits).
    ///   - maximumWait: How long a request waits; 5 seconds by default. Negative counts as 0.
    ///   - isOfflineError: Whether a failure means the machine is offline.
    public init(
        trigger: any RetryTrigger = NetworkMonitor(),
        maximumWait: Duration = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) {
        self.trigger = trigger
        self.maximumWait = max(.zero, maximumWait)
        self.isOfflineError = isOfflineError
    }

    /// Leaves the request as it is: this interceptor only retries.
    public func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest { urlRequest }

    /// Waits for connectivity to return, then retries; `.doNotRetry` when the failure is not an
    /// offline one, or connectivity did not return within ``maximumWait``.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        guard isOfflineError(error) else { return .doNotRetry }
        return await connectivityReturns() ? .retry : .doNotRetry
    }

    /// `true` once the trigger fires, `false` when ``maximumWait`` passes or the waiting task is
    /// cancelled, whichever comes first; the observation and the timer end either way.
    private func connectivityReturns() async -> Bool {
        let waiter = Waiter()
        let wait = maximumWait
        let trigger = self.trigger
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                guard waiter.begin(continuation) else { return }
                let observation = trigger.observe { _ in waiter.settle(true) }
                let timer = Task {
                    try? await Task.sleep(for: wait)
                    waiter.settle(false)
                }
                waiter.attach(observation, timer)
            }
        } onCancel: {
            waiter.settle(false)
        }
    }
}

/// One request's wait for connectivity: answered once, by the trigger, the timer or a cancel,
/// whichever comes first, and then the observation and the timer are let go.
private final class Waiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var observation: RetryTriggerObservation?
        var timer: Task<Void, Never>?
        var answer: Bool?
    }

    private let state = Protected(State())

    /// Takes the continuation to answer; `false` (and answered now) if the wait was settled
    /// already, by a cancel before it began.
    func begin(_ continuation: CheckedContinuation<Bool, Never>) -> Bool {
        let answered = state.withLock { state -> Bool? in
            if let answer = state.answer { return answer }
            state.continuation = continuation
            return nil
        }
        guard let answered else { return true }
        continuation.resume(returning: answered)
        return false
    }

    /// Keeps what the wait started, to end it with the answer (at once, if it came already).
    func attach(_ observation: RetryTriggerObservation, _ timer: Task<Void, Never>) {
        let isSettled = state.withLock { state -> Bool in
            guard state.answer == nil else { return true }
            state.observation = observation
            state.timer = timer
            return false
        }
        if isSettled { end(observation, timer) }
    }

    /// Answers the wait, the first time only.
    func settle(_ answer: Bool) {
        let taken = state.withLock { state -> State? in
            guard state.answer == nil else { return nil }
            state.answer = answer
            defer {
                state.continuation = nil
                state.observation = nil
                state.timer = nil
            }
            return state
        }
        guard let taken else { return }
        taken.continuation?.resume(returning: answer)
        end(taken.observation, taken.timer)
    }

    private func end(_ observation: RetryTriggerObservation?, _ timer: Task<Void, Never>?) {
        timer?.cancel()
        // Not on the trigger's thread, which may be delivering the event that settled this.
        if let observation { DispatchQueue.global().async { observation.cancel() } }
    }
}

extension RequestInterceptor where Self == OfflineRetrier {
    /// An ``OfflineRetrier``: `interceptor: .offlineRetrier(maximumWait: .seconds(10))`.
    public static func offlineRetrier(
        trigger: any RetryTrigger = NetworkMonitor(),
        maximumWait: Duration = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) -> OfflineRetrier {
        OfflineRetrier(trigger: trigger, maximumWait: maximumWait, isOfflineError: isOfflineError)
    }
}
