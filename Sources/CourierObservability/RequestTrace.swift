import Courier
import Foundation
import Tracing

/// The spans of one request: its own, and the open exchange span of each attempt whose end has
/// not been heard of yet, oldest first. Kept with the request (``Request/capturedContext(for:)``),
/// so it goes when the request goes: a monitor keeps no table of requests that could outlive them.
///
/// Exchanges start on whatever thread sends them; an exchange that follows a redirect or answers
/// a challenge ends the one before it there and then, with the answer it got. An attempt's last
/// exchange ends when its completion event arrives on the monitor's queue, which may be after the
/// next attempt started: hence one open span per attempt, in order. The request's span is ended
/// once, by the finish event; an exchange that starts after it is ended at once by whoever
/// started it.
///
/// `@unchecked Sendable`: `state` is read and written only under `lock`; `span` is a `Span`,
/// which is safe to use from any thread.
final class RequestTrace: @unchecked Sendable {
    let span: any Span
    private let lock = NSLock()
    private var state = State()

    private struct State {
        /// The current exchange's span of each attempt not heard to complete, oldest first.
        var attempts: [any Span] = []
        var started = 0
        var lastStatus: Int?
        var isFinished = false
    }

    /// What ``didStart(_:startsAttempt:describing:name:)`` found.
    struct Start {
        /// The request had finished: the caller ends the exchange, nothing else will.
        let isLate: Bool
        /// The attempt's exchange before this one, for the caller to end.
        let previous: (any Span)?
    }

    init(span: any Span) {
        self.span = span
    }

    deinit {
        // A request dropped before it finished (never resumed, or left suspended): its spans
        // still end, so no tracer keeps them.
        guard !state.isFinished else { return }
        state.attempts.forEach { $0.end() }
        span.end()
    }

    /// Whether no exchange ever started, so the span still has its placeholder name.
    var isUnnamed: Bool { lock.withLock { state.started == 0 } }

    /// Records that `exchange` started, as the first of an attempt or within the current one,
    /// and sets its `http.request.resend_count`. The request's first exchange names the request's
    /// span and adds `attributes` (the exchange's) to it. Both here, under the lock, so that a
    /// finish cannot come in between and have its own attributes overwritten.
    func didStart(
        _ exchange: any Span,
        startsAttempt: Bool,
        describing attributes: SpanAttributes,
        name: String
    ) -> Start {
        lock.withLock {
            defer { state.started += 1 }
            guard !state.isFinished else { return Start(isLate: true, previous: nil) }
            if state.started == 0 {
                span.operationName = name
                // It has none yet: a finish, the only other writer, has not begun.
                span.attributes = attributes
            } else {
                exchange.attributes["http.request.resend_count"] = state.started
            }
            var previous: (any Span)?
            if !startsAttempt, !state.attempts.isEmpty { previous = state.attempts.removeLast() }
            state.attempts.append(exchange)
            return Start(isLate: false, previous: previous)
        }
    }

    /// The oldest attempt's open exchange, now ended by the caller; records `status` as the
    /// latest answer (none, when the attempt got none).
    func completeAttempt(status: Int?) -> (any Span)? {
        lock.withLock {
            guard !state.isFinished else { return nil }
            state.lastStatus = status
            return state.attempts.isEmpty ? nil : state.attempts.removeFirst()
        }
    }

    /// The exchanges still open and the last status, the first time it is called; `nil` after.
    func finish() -> (open: [any Span], status: Int?)? {
        lock.withLock {
            guard !state.isFinished else { return nil }
            state.isFinished = true
            defer { state.attempts.removeAll() }
            return (state.attempts, state.lastStatus)
        }
    }
}
