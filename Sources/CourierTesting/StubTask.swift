import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt played by a ``StubTransport``: its script's events, delivered to its handler in
/// order, one at a time, never on the thread that called ``resume()``, ``suspend()`` or
/// ``cancel()`` and never under the task's lock.
///
/// One lock (around ``StateMachine``) guards all its state; events are decided under it and
/// performed after it is released. Handler calls run on a global dispatch queue; consecutive
/// steps with no wait between them run in one go on the same thread.
final class StubTask: TransportTask {
    private let machine: Locked<StateMachine>
    private let handler: any TransportEventHandler

    init(machine: StateMachine, handler: any TransportEventHandler) {
        self.machine = Locked(machine)
        self.handler = handler
    }

    func resume() {
        perform(machine.withLock { $0.resume(now: Date()) })
    }

    func suspend() {
        machine.withLock { $0.suspend() }
    }

    func cancel() {
        perform(machine.withLock { $0.cancel(now: Date()) })
    }

    /// The task's lifecycle, for tests of the stub.
    var lifecycle: StateMachine.Lifecycle {
        machine.withLock { $0.lifecycle }
    }

    private func waitEnded(token: Int) {
        perform(machine.withLock { $0.waitEnded(token: token, now: Date()) })
    }

    private func perform(_ action: StateMachine.Action) {
        switch action {
        case .none:
            return
        case .deliver(let event):
            // Off the caller's thread, as a real transport does: the caller may hold a lock of
            // its own that the handler takes.
            DispatchQueue.global().async { self.deliver(startingWith: event) }
        case .schedule(let duration, let token):
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.interval(duration)) {
                self.waitEnded(token: token)
            }
        case .await(let gate, let token):
            gate.arrive { self.waitEnded(token: token) }
        }
    }

    /// Calls the handler with `event`, then with each event that follows at once, until the
    /// script waits, is suspended or ends.
    private func deliver(startingWith event: StateMachine.Event) {
        var event = event
        while true {
            switch event {
            case .head(let head):
                handler.transportTask(self, didReceive: head)
            case .body(let data):
                handler.transportTask(self, didReceive: data)
            case .uploadProgress(let sent, let expected):
                handler.transportTask(self, didSendBodyBytes: sent, of: expected)
            case .completion(let error, let metrics):
                handler.transportTask(self, didCompleteWith: error, metrics: metrics)
            }
            let action = machine.withLock { $0.delivered(now: Date()) }
            guard case .deliver(let following) = action else {
                perform(action)
                return
            }
            event = following
        }
    }

    /// `duration` as a dispatch interval; negative counts as zero, and more than about 31
    /// years as that (beyond it, nanoseconds would overflow).
    static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .nanoseconds(0) }
        let limit: Int64 = 1_000_000_000
        guard seconds < limit else { return .seconds(Int(limit)) }
        return .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }
}
