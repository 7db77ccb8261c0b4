import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Courier/Transport`` that sends nothing: it answers each attempt with a scripted
/// ``StubResponse`` and records the requests it was asked to send. For tests without sockets.
///
/// ```swift
/// let transport = StubTransport()
/// transport.enqueue(.status(200, headers: ["Content-Type": "application/json"], body: Data(#"{"name":"Ada"}"#.utf8)))
/// let session = Session(transport: transport)
/// let user = try await session.request("https://api.example.com/user").serializingDecodable(User.self).value
/// #expect(transport.requests.first?.url?.path == "/user")
/// ```
///
/// Each attempt (a retry is a new attempt) takes its response from, in this order:
/// 1. the first response queued with ``enqueue(_:when:)`` whose condition it meets (each is
///    used once, in the order queued);
/// 2. the first rule added with ``stub(_:when:)`` or ``respond(_:)`` that answers it (rules answer
///    every attempt they match);
/// 3. otherwise the `unmatched` response given to ``init(unmatched:)``: by default a failure
///    with `URLError(.resourceUnavailable)`, so a request the test did not expect fails visibly.
///
/// Tasks behave as the ``Courier/TransportTask`` contract says: events reach the handler in
/// order, never two at once, on a global dispatch queue (never on the thread calling `resume`,
/// `suspend` or `cancel`); `suspend()` holds delivery until `resume()`; `cancel()` completes
/// the attempt with `URLError(.cancelled)` exactly once unless it had already completed,
/// whatever it races with; every attempt completes exactly once, with ``Courier/RequestMetrics``
/// (no remote address; bytes sent are the body's length when known). Use a ``StubGate`` to stop
/// an attempt at a chosen point and race something against it.
public final class StubTransport: Transport {
    /// A rule: the response for an attempt, or `nil` when the rule does not answer it.
    private typealias Responder = @Sendable (URLRequest) -> StubResponse?

    private struct State: Sendable {
        var queued: [(matches: @Sendable (URLRequest) -> Bool, response: StubResponse)] = []
        var rules: [Responder] = []
        var requests: [URLRequest] = []
        var isInvalidated = false
    }

    private let state = Locked(State())
    private let unmatched: StubResponse

    /// A transport with nothing scripted yet.
    ///
    /// - Parameter unmatched: The answer to an attempt no queued response or rule answers; by
    ///   default a failure with `URLError(.resourceUnavailable)`.
    public init(unmatched: StubResponse = .failure(URLError(.resourceUnavailable))) {
        self.unmatched = unmatched
    }

    /// A transport that answers the first attempts with `responses`, one each, in order.
    ///
    /// - Parameters:
    ///   - responses: Queued as by ``enqueue(_:when:)`` with no condition.
    ///   - unmatched: The answer once they are used up; by default a failure with
    ///     `URLError(.resourceUnavailable)`.
    public convenience init(
        _ responses: [StubResponse],
        unmatched: StubResponse = .failure(URLError(.resourceUnavailable))
    ) {
        self.init(unmatched: unmatched)
        for response in responses { enqueue(response) }
    }

    /// Queues `response` for one attempt: the first one made from now on that `matches` (any,
    /// by default) and that no earlier queued response takes.
    ///
    /// - Parameters:
    ///   - response: The script the attempt plays.
    ///   - matches: Which attempts may take it; every one by default. It runs under the
    ///     transport's lock: keep it to reading the request, and never call the transport from it.
    public func enqueue(
        _ response: StubResponse,
        when matches: @escaping @Sendable (URLRequest) -> Bool = { _ in true }
    ) {
        state.withLock { $0.queued.append((matches, response)) }
    }

    /// Answers every attempt that `matches` with `response`, unless a queued response takes it
    /// first. Rules are tried in the order added.
    ///
    /// - Parameters:
    ///   - response: The script each matching attempt plays.
    ///   - matches: Which attempts the rule answers; every one by default.
    public func stub(
        _ response: StubResponse,
        when matches: @escaping @Sendable (URLRequest) -> Bool = { _ in true }
    ) {
        state.withLock { $0.rules.append { matches($0) ? response : nil } }
    }

    /// Answers attempts with what `responder` makes from each request (it returns `nil` to
    /// leave an attempt to later rules), unless a queued response takes it first. Use it to
    /// build a response from the request, such as echoing its body.
    ///
    /// `responder` runs on the thread that made the attempt, outside the transport's lock.
    public func respond(_ responder: @escaping @Sendable (URLRequest) -> StubResponse?) {
        state.withLock { $0.rules.append(responder) }
    }

    /// The requests of every attempt made so far, in order. A body given in memory (as
    /// ``Courier/RequestBody/data(_:)`` or `httpBody`) is set as the recorded request's `httpBody`.
    public var requests: [URLRequest] {
        state.withLock { $0.requests }
    }

    /// How many queued responses no attempt has taken yet: zero once a test used all it queued.
    public var unusedResponseCount: Int {
        state.withLock { $0.queued.count }
    }

    /// Makes a task that plays the response chosen for `request` once resumed.
    public func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        var recorded = request
        if let data = body?.data { recorded.httpBody = data }
        let (queued, rules, isInvalidated) = state.withLock { state in
            state.requests.append(recorded)
            guard !state.isInvalidated else { return (nil as StubResponse?, [Responder](), true) }
            if let index = state.queued.firstIndex(where: { $0.matches(recorded) }) {
                return (state.queued.remove(at: index).response, [], false)
            }
            return (nil, state.rules, false)
        }
        let response: StubResponse
        if isInvalidated {
            response = .failure(URLError(.cancelled))
        } else if let queued {
            response = queued
        } else {
            // Rules run outside the lock: they are the test's code.
            response = rules.lazy.compactMap { $0(recorded) }.first ?? unmatched
        }
        let bodyLength: Int64? = if let body { body.length } else { request.httpBody.map { Int64($0.count) } }
        guard let url = request.url else {
            let machine = StubTask.StateMachine(
                url: URL(fileURLWithPath: "/"),
                response: .failure(URLError(.badURL)),
                bodyLength: nil
            )
            return StubTask(machine: machine, handler: eventHandler)
        }
        let machine = StubTask.StateMachine(url: url, response: response, bodyLength: bodyLength)
        return StubTask(machine: machine, handler: eventHandler)
    }

    /// Marks the transport invalidated: attempts made afterwards fail with `URLError(.cancelled)`.
    /// Attempts already made play on.
    public func invalidate() async {
        state.withLock { $0.isInvalidated = true }
    }
}
