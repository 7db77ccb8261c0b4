import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt of a custom request: runs its ``CustomRequestDelegate`` in place of a network
/// exchange, and reports the answer to the attempt as a transport task would (head, body,
/// completion), so that everything after it is the same as for any request.
///
/// The delegate is started and told to cancel on a serial queue of the task's own, so a cancel
/// never reaches it before its start. An answer is delivered on the thread that gave it (or, if
/// held while suspended, from a queue of Courier's); a cancel completes from a queue of Courier's.
/// Only one of them ever delivers: the ``StateMachine`` picks it, under the lock.
final class CustomOperationTask: TransportTask, Sendable {
    private struct State {
        var machine = StateMachine()
        /// Released once the task ends: a delegate that keeps its completion handler (which
        /// holds this task) would otherwise keep itself and the task alive for good.
        var delegate: (any CustomRequestDelegate)?
        /// Released once the completion is sent.
        var eventHandler: (any TransportEventHandler)?
        /// The progress polling, stopped when the task ends.
        var polling: Task<Void, Never>?
        var startDate = Date()
    }

    /// Where every delegate's start and cancel run, a serial queue per task targeting it.
    private static let sharedQueue = DispatchQueue(label: "Courier.CustomRequest.shared", attributes: .concurrent)

    /// Seconds between progress polls, as the delegate asked when the task was made.
    private let progressInterval: TimeInterval
    private let url: URL
    /// The request, for reporting progress and dropped answers; the task does not keep it alive.
    private weak let request: Request?
    private let queue = DispatchQueue(label: "Courier.CustomRequest", target: CustomOperationTask.sharedQueue)
    private let state: Protected<State>

    init(delegate: any CustomRequestDelegate, url: URL, eventHandler: any TransportEventHandler) {
        progressInterval = delegate.progressReportingInterval
        self.url = url
        request = (eventHandler as? Request.Attempt)?.request
        state = Protected(State(delegate: delegate, eventHandler: eventHandler))
    }

    var willIgnore: Bool { state.withLock { $0.machine.willIgnore } }

    func resume() {
        let action = state.withLock { state -> StateMachine.ResumeAction in
            let action = state.machine.resume()
            if case .start = action, let delegate = state.delegate {
                state.startDate = Date()
                // Queued under the lock (which runs none of the delegate's code), so that a
                // cancel deciding after this is queued after it: the delegate hears the start first.
                let handler = CustomRequestCompletionHandler(task: self)
                queue.async { delegate.startUnderlyingOperation(passingResponseTo: handler) }
            }
            return action
        }
        switch action {
        case .none:
            break
        case .start:
            startPolling()
        case .deliver(let outcome):
            // Not on the delegate's queue, which its own work may still hold.
            Self.sharedQueue.async { self.deliver(outcome) }
        }
    }

    func suspend() {
        state.withLock { $0.machine.suspend() }
    }

    func cancel() {
        let (action, taken) = state.withLock { state -> (StateMachine.CancelAction, State?) in
            let action = state.machine.cancel()
            guard case .complete(let tellsDelegate) = action else { return (action, nil) }
            // Queued under the lock, after the start (see `resume()`).
            if tellsDelegate, let delegate = state.delegate { queue.async { delegate.cancelUnderlyingOperation() } }
            defer {
                state.delegate = nil
                state.eventHandler = nil
                state.polling = nil
            }
            return (action, state)
        }
        guard action != .none, let taken else { return }
        taken.polling?.cancel()
        guard let handler = taken.eventHandler else { return }
        let metrics = RequestMetrics(startDate: taken.startDate, endDate: Date())
        // Never on the caller's thread, as every transport's cancel: the caller may hold a lock
        // its handler takes.
        Self.sharedQueue.async {
            handler.transportTask(self, didCompleteWith: URLError(.cancelled), metrics: metrics)
        }
    }

    /// Takes the delegate's answer, if it is the first and the request still wants one.
    func answer(_ outcome: Outcome) -> Bool {
        switch state.withLock({ $0.machine.answer(outcome) }) {
        case .deliver(let outcome):
            deliver(outcome)
            return true
        case .hold:
            return true
        case .ignore(let reason):
            if let request { request.monitor?.request(request, didIgnoreCustomResponse: reason) }
            return false
        }
    }

    /// Reports `outcome` to the attempt: a response as its head, body and completion; a failure
    /// as the completion's error. The machine has ended, so this runs once.
    private func deliver(_ outcome: Outcome) {
        let taken = state.withLock { state -> State in
            defer {
                state.delegate = nil
                state.eventHandler = nil
                state.polling = nil
            }
            return state
        }
        taken.polling?.cancel()
        guard let handler = taken.eventHandler else { return }
        let start = taken.startDate
        switch outcome {
        case .success(let response) where (100...999).contains(response.statusCode):
            // Complete from now on; the request reports the last 1.0 itself, as it finishes.
            let attempt = handler as? Request.Attempt
            attempt?.request.recordOperationProgress(1, by: attempt, reports: false)
            let head = ResponseHead(
                url: response.url ?? url,
                statusCode: response.statusCode,
                httpVersion: "HTTP/1.1",
                headerFields: response.headers.map { (name: $0.name, value: $0.value) }
            )
            let timeToFirstByte = Date().timeIntervalSince(start)
            handler.transportTask(self, didReceive: head)
            if !response.body.isEmpty { handler.transportTask(self, didReceive: response.body) }
            let metrics = RequestMetrics(
                startDate: start,
                endDate: Date(),
                timeToFirstByte: timeToFirstByte,
                bytesReceived: Int64(response.body.count),
                statusCode: response.statusCode
            )
            handler.transportTask(self, didCompleteWith: nil, metrics: metrics)
        case .success(let response):
            let error = CourierError.invalidResponse(
                reason: "a custom request's delegate answered with status code \(response.statusCode), outside 100…999"
            )
            complete(handler, failingWith: error, since: start)
        case .failure(let error as CourierError):
            complete(handler, failingWith: error, since: start)
        case .failure(let error as URLError):
            // Named here: the request would read some URLErrors (`.cannotOpenFile`, one carrying
            // a CourierError) as something else.
            complete(handler, failingWith: .transportFailed(error), since: start)
        case .failure(let error):
            complete(handler, failingWith: .customRequestFailed(error), since: start)
        }
    }

    /// Completes with `error`, carried under `NSUnderlyingErrorKey`, where the request reads it as itself.
    private func complete(_ handler: any TransportEventHandler, failingWith error: CourierError, since start: Date) {
        let carrier = URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
        handler.transportTask(
            self,
            didCompleteWith: carrier,
            metrics: RequestMetrics(startDate: start, endDate: Date())
        )
    }

    /// Polls the delegate's progress until the task ends. The delegate's `computeProgress()` runs
    /// off the lock; the machine keeps only what moves forward.
    private func startPolling() {
        let seconds = progressInterval
        // NaN means the default; infinity, once a day.
        let interval: Duration =
            seconds.isNaN ? .milliseconds(50) : seconds > 0.001 ? .seconds(min(seconds, 86_400)) : .milliseconds(1)
        let polling = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                self.poll()
            }
        }
        let isOver = state.withLock { state -> Bool in
            guard state.eventHandler != nil else { return true }
            state.polling = polling
            return false
        }
        if isOver { polling.cancel() }
    }

    private func poll() {
        guard let delegate = state.withLock({ $0.eventHandler == nil ? nil : $0.delegate }) else { return }
        let value = delegate.computeProgress()
        // Reported under the task's lock, which `deliver` takes before the response: so no poll
        // can report after the response's 1.0, and progress never shows going back. (The request
        // never calls its task while holding its own lock, so the order of the two locks is fixed.)
        state.withLock { state in
            guard let report = state.machine.progressed(value), let attempt = state.eventHandler as? Request.Attempt
            else { return }
            attempt.request.recordOperationProgress(report, by: attempt)
        }
    }
}

/// Runs each attempt of a custom request on its own ``CustomOperationTask``.
struct CustomOperationTransport: Transport {
    let delegate: any CustomRequestDelegate
    /// Where the response says it came from, unless the delegate says otherwise.
    let url: URL

    func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        CustomOperationTask(delegate: delegate, url: url, eventHandler: eventHandler)
    }

    func makeTask(
        for head: RequestHead,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        CustomOperationTask(delegate: delegate, url: head.url, eventHandler: eventHandler)
    }

    func invalidate() async {}
}
