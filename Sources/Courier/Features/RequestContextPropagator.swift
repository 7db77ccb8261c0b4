import Foundation

/// An event monitor that carries something of the task that makes a request (a trace, a
/// baggage) into every exchange the request sends: the two hooks distributed tracing needs,
/// which events alone cannot give, because they arrive later, on the monitor's queue.
///
/// Add one to a session among its `eventMonitors`; the session then also calls its two hooks,
/// synchronously:
/// - ``captureContext()`` on the task that makes each request, before the request is handed
///   back, so that task-local values (swift-distributed-tracing's `ServiceContext.current`) can
///   be read. What it returns stays with the request: read it back with
///   ``Request/capturedContext(for:)``.
/// - ``request(_:willSend:because:headers:context:)`` before each exchange goes to the transport
///   (each attempt, each redirect followed, each challenge answered), to set headers such as W3C
///   `traceparent`. The ``ExchangeReason`` tells an attempt's first exchange from the ones that
///   follow within it, and hands over the answer that ended the exchange before.
///
/// `CourierObservability`'s `TracingEventMonitor` is one. Only the session's own monitors
/// propagate (not one inside a ``CompositeEventMonitor`` given as a monitor, nor one added to a
/// single request with ``Request/eventMonitor(_:)``: those hear events only). Each propagator
/// sees the head as built before any propagator ran, and the headers as the ones before it left them.
/// Both hooks run on Courier's threads or the caller's, inside the request's work: keep them short,
/// and never wait in them for anything a request does.
public protocol RequestContextPropagator: EventMonitor, AnyObject {
    /// Called on the task that makes a request, as it is made; the value is kept with the
    /// request and handed to ``request(_:willSend:because:headers:context:)``. `nil` keeps nothing.
    func captureContext() -> (any Sendable)?

    /// Called before an exchange of `request` is handed to the transport, with the head it
    /// sends and what ``captureContext()`` returned for the request. Changes to `headers` are
    /// sent, and recorded in ``Request/requests`` and the events that follow.
    ///
    /// - Parameters:
    ///   - request: The request sending the exchange.
    ///   - head: What the exchange sends, as built so far: method, URL, headers.
    ///   - reason: Whether the exchange starts an attempt, or follows a redirect or answers a
    ///     challenge within one (with the answer that ended the exchange before).
    ///   - headers: The exchange's headers, to change.
    ///   - context: What ``captureContext()`` returned when the request was made.
    func request(
        _ request: Request,
        willSend head: RequestHead,
        because reason: ExchangeReason,
        headers: inout HTTPHeaders,
        context: (any Sendable)?
    )
}

/// Why a request sends an exchange (see ``RequestContextPropagator``).
///
/// An attempt is one or more exchanges: its first, then one per redirect followed and per
/// authentication challenge answered. Each exchange after the first starts once the one before
/// has ended, with the answer that ended it. A retry (or a download starting over) is a new attempt.
public enum ExchangeReason: Sendable {
    /// The first exchange of an attempt: the request's first, or a retry's.
    case attempt
    /// A redirect followed within the attempt: the `3xx` answer of the exchange before.
    case redirect(ResponseHead)
    /// An authentication challenge answered within the attempt: the `401` or `407` answer of
    /// the exchange before.
    case challengeAnswer(ResponseHead)
}

extension Request {
    /// What `propagator` captured when this request was made (see
    /// ``RequestContextPropagator/captureContext()``); `nil` when it captured nothing, or was not
    /// one of the session's monitors then.
    public func capturedContext(for propagator: any RequestContextPropagator) -> (any Sendable)? {
        capturedContexts.first { $0.propagator === propagator }?.value
    }

    /// What each of the session's propagators captured, in the order of its monitors.
    struct CapturedContext: Sendable {
        let propagator: any RequestContextPropagator
        let value: (any Sendable)?
    }

    /// Lets every propagator set the headers of the exchange `head` is about to send.
    func propagateContext(into head: inout RequestHead, because reason: ExchangeReason) {
        guard !capturedContexts.isEmpty else { return }
        var headers = head.headers
        for captured in capturedContexts {
            captured.propagator.request(
                self,
                willSend: head,
                because: reason,
                headers: &headers,
                context: captured.value
            )
        }
        if headers != head.headers { head.replaceHeaders(with: headers) }
    }
}
