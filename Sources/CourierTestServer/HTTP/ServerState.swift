import NIOConcurrencyHelpers
import NIOCore

/// What all connections of one server share: its configuration, the fault routes' counters and
/// the open connections (so shutdown can close them).
///
/// Thread-safe: the mutable parts sit behind their own `NIOLockedValueBox`.
final class ServerState: Sendable {
    let configuration: TestServer.Configuration
    private let counters = NIOLockedValueBox<[String: Int]>([:])
    private let connections = NIOLockedValueBox<(isShuttingDown: Bool, channels: [ObjectIdentifier: any Channel])>(
        (false, [:])
    )

    /// Requests received so far, and the tasks waiting for the count to reach a target.
    private struct RequestLog {
        var count = 0
        var waiters: [UInt64: (target: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var lastWaiterID: UInt64 = 0
    }

    private let requests = NIOLockedValueBox(RequestLog())

    init(configuration: TestServer.Configuration) {
        self.configuration = configuration
    }

    /// Counts one more request for `key` and returns the new count (1 for the first).
    func recordAttempt(forKey key: String) -> Int {
        counters.withLockedValue { counters in
            counters[key, default: 0] += 1
            return counters[key, default: 0]
        }
    }

    /// How many requests were counted for `key`.
    func attempts(forKey key: String) -> Int {
        counters.withLockedValue { $0[key, default: 0] }
    }

    /// Counts a request head and wakes the waiters whose target it reaches.
    func recordRequest() {
        let ready = requests.withLockedValue { state in
            state.count += 1
            let reached = state.waiters.filter { $0.value.target <= state.count }
            for key in reached.keys { state.waiters[key] = nil }
            return reached.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Returns `true` once `target` requests have been received, or `false` if the task is cancelled first.
    func waitForRequests(_ target: Int) async -> Bool {
        let waiter = requests.withLockedValue { state -> UInt64 in
            state.lastWaiterID += 1
            return state.lastWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let resumeNow = requests.withLockedValue { state -> Bool? in
                    if state.count >= target { return true }
                    if Task.isCancelled { return false }
                    state.waiters[waiter] = (target, continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let cancelled = requests.withLockedValue { $0.waiters.removeValue(forKey: waiter) }
            cancelled?.continuation.resume(returning: false)
        }
    }

    /// Tracks a new connection until it closes; closes it at once if the server is shutting down.
    func register(_ channel: any Channel) {
        let identifier = ObjectIdentifier(channel)
        let accepted = connections.withLockedValue { state in
            guard !state.isShuttingDown else { return false }
            state.channels[identifier] = channel
            return true
        }
        guard accepted else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [connections] _ in
            _ = connections.withLockedValue { $0.channels.removeValue(forKey: identifier) }
        }
    }

    /// Marks the server as shutting down and returns the connections still open.
    func beginShutdown() -> [any Channel] {
        connections.withLockedValue { state in
            state.isShuttingDown = true
            return Array(state.channels.values)
        }
    }
}
