import Foundation

/// Tells a session that requests waiting out a retry delay should retry now: the network came
/// back, or a request to the same origin just succeeded.
///
/// A session observes each of its triggers (``Session/Configuration/retryTriggers``) from its
/// creation until ``Session/invalidate()``. When a trigger fires, every request of that session
/// waiting to retry (for that origin, or all of them) starts its next attempt at once instead of
/// at the end of its delay. Requests stop waiting when they retry, finish or are cancelled, so a
/// trigger holds no request.
///
/// Implement it to add your own signal, for example an app returning to the foreground.
public protocol RetryTrigger: Sendable {
    /// Starts calling `handler` whenever waiting retries should run now; the returned observation
    /// stops the calls when cancelled.
    func observe(_ handler: @escaping @Sendable (RetryTriggerEvent) -> Void) -> RetryTriggerObservation
}

/// Which waiting retries a ``RetryTrigger`` releases.
public enum RetryTriggerEvent: Sendable, Hashable {
    /// Every waiting request: connectivity returned.
    case all
    /// Requests to one origin, as `scheme://host:port` (see ``RetryTriggerEvent/origin(of:)``).
    case origin(String)

    /// The origin of `url` as ``origin(_:)`` names it, with the scheme's default port when none is
    /// given; `nil` for a URL without a scheme or host.
    public static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }
}

/// A ``RetryTrigger``'s subscription: ``cancel()`` stops its calls. Cancelling twice does nothing.
public final class RetryTriggerObservation: Sendable {
    private let onCancel: Protected<(@Sendable () -> Void)?>

    /// An observation that runs `onCancel` once, when first cancelled.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Protected(onCancel)
    }

    /// Stops the trigger's calls.
    public func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit {
        cancel()
    }
}
