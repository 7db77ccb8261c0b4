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
