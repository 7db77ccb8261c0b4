import Courier
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport event handler that records what it is told, checks that calls never overlap,
/// and lets a test await the completion.
final class RecordingHandler: TransportEventHandler {
    /// One call the handler received.
    enum Event: Equatable, Sendable {
        case head(Int)
        case body(Data)
        case sent(Int64, Int64?)
        case completion(URLError.Code?)
    }

    private struct State: Sendable {
        var events: [Event] = []
        var metrics: RequestMetrics?
        var heads: [ResponseHead] = []
        var completions = 0
        var callsInside = 0
        var overlaps = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = TestLock(State())

    /// Everything received, in order.
    var events: [Event] { state.withLock { $0.events } }
    /// The heads received.
    var heads: [ResponseHead] { state.withLock { $0.heads } }
    /// The completion's metrics.
    var metrics: RequestMetrics? { state.withLock { $0.metrics } }
    /// How many completions arrived.
    var completions: Int { state.withLock { $0.completions } }
    /// How many calls started while another was still running.
    var overlaps: Int { state.withLock { $0.overlaps } }

    /// Returns once the completion has arrived.
    func waitForCompletion() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.completions > 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func record(_ event: Event, head: ResponseHead? = nil, metrics: RequestMetrics? = nil) {
        state.withLock { state in
            state.callsInside += 1
            if state.callsInside > 1 { state.overlaps += 1 }
        }
        // Stay inside a little, so that an overlapping call would be seen.
        for _ in 0..<50 { _ = state.withLock { $0.callsInside } }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.callsInside -= 1
            state.events.append(event)
            if let head { state.heads.append(head) }
            guard case .completion = event else { return [] }
            state.completions += 1
            state.metrics = metrics
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse) {
        record(.head(response.statusCode))
    }

    func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {
        record(.head(head.statusCode), head: head)
    }

    func transportTask(_ task: any TransportTask, didReceive data: Data) {
        record(.body(data))
    }

    func transportTask(_ task: any TransportTask, didSendBodyBytes totalBytesSent: Int64, of totalBytesExpected: Int64?)
    {
        record(.sent(totalBytesSent, totalBytesExpected))
    }

    func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics) {
        record(.completion(error?.code), metrics: metrics)
    }
}

/// Counts calls, so a test can check a handler ran exactly once.
final class CallCounter: Sendable {
    private let count = TestLock(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
