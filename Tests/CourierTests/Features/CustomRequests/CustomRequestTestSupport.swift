import Courier
import CourierTestSupport
import Foundation
import Synchronization

/// Values handed over from threads a test does not control, taken in order by an awaiting test.
final class Mailbox<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [Int: CheckedContinuation<Value, Never>] = [:]
    }

    // A `TestLock`, not `Mutex`: ThreadSanitizer cannot see through `Mutex` on Linux.
    private let state = TestLock(State())

    func put(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            state.values.append(value)
            return state.waiters.removeValue(forKey: state.values.count - 1)
        }
        waiter?.resume(returning: value)
    }

    var count: Int { state.withLock { $0.values.count } }
    var values: [Value] { state.withLock { $0.values } }

    /// The value put in `index`-th (from 0), once it is there; `nil` after ``hangLimit``.
    func value(at index: Int) async -> Value? {
        await CourierTestSupport.value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                let ready = self.state.withLock { state -> Value? in
                    if index < state.values.count { return state.values[index] }
                    state.waiters[index] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

/// What every delegate of one test saw, over all its repeats.
final class DelegateLog: Sendable {
    /// The completion handler of each start, in order.
    let starts = Mailbox<CustomRequestCompletionHandler>()
    /// The index of each delegate told to cancel.
    let cancels = Mailbox<Int>()
    /// How many delegates `repeated()` made.
    let repeats = Mutex(0)
    /// `start` and `cancel`, in the order the delegates heard them.
    let events = Mailbox<String>()
}

/// A delegate that records what Courier asks of it and runs `onStart` when started; each
/// repeat is the same with the next index.
struct ScriptedDelegate: CustomRequestDelegate {
    let log: DelegateLog
    var index = 0
    var interval: TimeInterval = 0.05
    var progress: @Sendable () -> Double = { 0 }
    var request: URLRequest?
    let onStart: @Sendable (CustomRequestCompletionHandler, Int) -> Void

    init(
        log: DelegateLog = DelegateLog(),
        request: URLRequest? = nil,
        onStart: @escaping @Sendable (CustomRequestCompletionHandler, Int) -> Void = { _, _ in }
    ) {
        self.log = log
        self.request = request
        self.onStart = onStart
    }

    func startUnderlyingOperation(passingResponseTo completionHandler: CustomRequestCompletionHandler) {
        log.events.put("start")
        log.starts.put(completionHandler)
        onStart(completionHandler, index)
    }

    func cancelUnderlyingOperation() {
        log.events.put("cancel")
        log.cancels.put(index)
    }

    func repeated() -> any CustomRequestDelegate {
        log.repeats.withLock { $0 += 1 }
        var next = self
        next.index += 1
        return next
    }

    func computeProgress() -> Double { progress() }
    var progressReportingInterval: TimeInterval { interval }
    var requestDescription: String { "scripted #\(index)" }
    var urlRequest: URLRequest? { request }
}

extension CustomResponse {
    /// A `text/plain` response of `text`.
    static func text(_ text: String, status: Int = 200) -> CustomResponse {
        CustomResponse(statusCode: status, headers: ["Content-Type": "text/plain"], body: Data(text.utf8))
    }
}
