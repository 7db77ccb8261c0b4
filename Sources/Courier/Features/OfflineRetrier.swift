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
/// satisfied (Apple platforms); any event ends the wait, and a request whose failed attempt
/// began before the last event retries at once. A request that is not offline (see
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
    ///   - trigger: What says connectivity may have returned; by default ``NetworkMonitor/shared``,
    ///     which every retrier made this way shares.
    ///     It is observed for as long as the retrier lives, so that an event during an attempt
    ///     that then fails offline is not missed.
    ///   - maximumWait: How long a request waits; 5 seconds by default. Negative counts as 0,
    ///     beyond a year as a year.
    ///   - isOfflineError: Whether a failure means the machine is offline.
    public init(
        trigger: any RetryTrigger = NetworkMonitor.shared,
        maximumWait: Duration = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) {
        self.trigger = trigger
        self.maximumWait = min(max(.zero, maximumWait), .seconds(365 * 24 * 3600))
        self.isOfflineError = isOfflineError
        startWatching()
    }

    /// Leaves the request as it is: this interceptor only retries (sessions skip it when adapting).
    public func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest { urlRequest }

    /// Retries at once when the trigger fired since the failed attempt began (connectivity may be
    /// back already), else waits for it to fire, at most ``maximumWait``; `.doNotRetry` when the
    /// failure is not an offline one, or connectivity did not return in time.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        guard isOfflineError(error) else { return .doNotRetry }
        return await connectivityReturns(for: request.id, since: request.metrics?.startDate) ? .retry : .doNotRetry
    }

    /// The trigger's observation and who waits on it.
    private struct Watch {
        var observation: RetryTriggerObservation?
        /// When the trigger last fired, and how many times it has.
        var lastEvent: Date?
        var eventCount = 0
        /// The event each request last retried at once for: once per event, so that a wall clock
        /// stepped back (`lastEvent` then seems later than every new attempt) cannot make a
        /// request retry in a loop. Emptied past 1,024 requests (at worst one more retry each).
        var immediateRetries: [UUID: Int] = [:]
        var waiters: [UUID: Waiter] = [:]
        /// How many waits began, in all (for tests).
        var waitsBegun = 0
    }

    private let watch = Protected(Watch())

    /// How many times a request began to wait for the trigger.
    var waitsBegun: Int { watch.withLock { $0.waitsBegun } }

    deinit {
        // Not on the trigger's thread, which may be delivering the event that let this go.
        if let observation = watch.withLock({ $0.observation }) {
            DispatchQueue.global().async { observation.cancel() }
        }
    }

    /// Observes the trigger for the retrier's life.
    private func startWatching() {
        let observation = trigger.observe { [weak self] _ in self?.triggerFired() }
        watch.withLock { $0.observation = observation }
    }

    /// Notes the event and ends every wait.
    private func triggerFired() {
        let waiters = watch.withLock { watch -> [Waiter] in
            watch.lastEvent = Date()
            watch.eventCount += 1
            defer { watch.waiters = [:] }
            return Array(watch.waiters.values)
        }
        for waiter in waiters { waiter.settle(true) }
    }

    /// `true` at once if the trigger fired since `start` (once per event for request `requestID`);
    /// else `true` once it fires, `false` when ``maximumWait`` passes or the waiting task is
    /// cancelled, whichever comes first.
    private func connectivityReturns(for requestID: UUID, since start: Date?) async -> Bool {
        let waiter = Waiter()
        let id = UUID()
        let wait = maximumWait
        let watch = self.watch
        let answer = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                guard waiter.begin(continuation) else { return }
                // Checked and registered under one lock: an event lands before (seen here) or
                // after (it settles the waiter), never between.
                let firedAlready = watch.withLock { watch -> Bool in
                    if let start, let last = watch.lastEvent, last >= start,
                        watch.immediateRetries[requestID] != watch.eventCount
                    {
                        if watch.immediateRetries.count >= 1024 { watch.immediateRetries = [:] }
                        watch.immediateRetries[requestID] = watch.eventCount
                        return true
                    }
                    watch.waiters[id] = waiter
                    watch.waitsBegun += 1
                    return false
                }
                if firedAlready {
                    waiter.settle(true)
                    return
                }
                waiter.attach(
                    Task {
                        try? await Task.sleep(for: wait)
                        waiter.settle(false)
                    }
                )
            }
        } onCancel: {
            waiter.settle(false)
        }
        watch.withLock { _ = $0.waiters.removeValue(forKey: id) }
        return answer
    }
}

/// One request's wait for connectivity: answered once, by the trigger, the timer or a cancel,
/// whichever comes first, and then the timer is let go.
private final class Waiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
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

    /// Keeps the timer, to end it with the answer (at once, if it came already).
    func attach(_ timer: Task<Void, Never>) {
        let isSettled = state.withLock { state -> Bool in
            guard state.answer == nil else { return true }
            state.timer = timer
            return false
        }
        if isSettled { timer.cancel() }
    }

    /// Answers the wait, the first time only.
    func settle(_ answer: Bool) {
        let taken = state.withLock { state -> State? in
            guard state.answer == nil else { return nil }
            state.answer = answer
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return state
        }
        guard let taken else { return }
        taken.continuation?.resume(returning: answer)
        taken.timer?.cancel()
    }
}

extension RequestInterceptor where Self == OfflineRetrier {
    /// An ``OfflineRetrier``: `interceptor: .offlineRetrier(maximumWait: .seconds(10))`.
    public static func offlineRetrier(
        trigger: any RetryTrigger = NetworkMonitor.shared,
        maximumWait: Duration = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) -> OfflineRetrier {
        OfflineRetrier(trigger: trigger, maximumWait: maximumWait, isOfflineError: isOfflineError)
    }
}
