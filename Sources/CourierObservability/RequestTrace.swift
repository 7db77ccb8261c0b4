import Courier
import Foundation
import Tracing

/// The spans of one request: its own, and those of its exchanges not ended yet, oldest first.
/// Kept with the request (``Request/capturedContext(for:)``), so it goes when the request goes:
/// a monitor keeps no table of requests that could outlive them.
///
/// Exchanges start on whatever thread sends them, and end on the monitor's queue, where events
/// arrive later: the open ones wait here in order. The request's span is ended once, by the
/// finish event; an exchange that starts after it is ended at once by whoever started it.
///
/// `@unchecked Sendable`: `state` is read and written only under `lock`; `span` is a `Span`,
/// which is safe to use from any thread.
final class RequestTrace: @unchecked Sendable {
    let span: any Span
    private let lock = NSLock()
    private var state = State()

    private struct State {
        var open: [any Span] = []
        var started = 0
        var lastStatus: Int?
        var isFinished = false
    }

    init(span: any Span) {
        self.span = span
    }

    deinit {
        // A request dropped before it ever ran: its span still ends, so no tracer keeps it.
        if !state.isFinished { span.end() }
    }

    /// Whether no exchange ever started, so the span still has its placeholder name.
    var isUnnamed: Bool { lock.withLock { state.started == 0 } }

    /// Records that `exchange` started: how many started before it, and whether the request
    /// had finished already (then the caller ends it: nothing else will).
    func didStart(_ exchange: any Span) -> (resends: Int, isLate: Bool) {
        lock.withLock {
            if !state.isFinished { state.open.append(exchange) }
            state.started += 1
            return (state.started - 1, state.isFinished)
        }
    }

    /// The oldest open exchange, now ended by the caller (a redirect's).
    func endNextExchange() -> (any Span)? {
        lock.withLock { state.open.isEmpty ? nil : state.open.removeFirst() }
    }

    /// Every open exchange (an attempt's, with the challenges answered on its way).
    func endExchanges() -> [any Span] {
        lock.withLock {
            defer { state.open.removeAll() }
            return state.open
        }
    }

    func record(status: Int?) {
        guard let status else { return }
        lock.withLock { state.lastStatus = status }
    }

    /// The exchanges still open and the last status, the first time it is called; `nil` after.
    func finish() -> (open: [any Span], status: Int?)? {
        lock.withLock {
            guard !state.isFinished else { return nil }
            state.isFinished = true
            defer { state.open.removeAll() }
            return (state.open, state.lastStatus)
        }
    }
}
