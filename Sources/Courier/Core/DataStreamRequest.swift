import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// @unchecked Sendable: its own mutable state sits in `streamState`, behind Request's lock, which
// it shares; the rest is Request's.
/// A request whose response body reaches you in pieces as it arrives, for long-lived or large
/// responses: server-sent lines, JSON lines, media.
///
/// ```swift
/// for try await event in session.streamRequest(url).validate().streamingDecodable(Event.self) {
///     print(event)
/// }
/// ```
///
/// Consume with ``responseStream(on:bufferLimit:stream:)`` (and its string and `Decodable` forms) or the
/// async sequences ``streamingData(automaticallyCancelling:bufferLimit:)``, ``streamingStrings(automaticallyCancelling:bufferLimit:)`` and
/// ``streamingDecodable(_:automaticallyCancelling:decoder:bufferLimit:maximumLineLength:)``. Validators run on the
/// response head, before the first piece reaches you. A consumer that falls behind holds the
/// transfer back (the transport stops reading the socket) instead of letting the body pile up in
/// memory. Once a piece has been delivered the request is not retried: you would see it twice.
public final class DataStreamRequest: Request, @unchecked Sendable {
    /// Receives the pieces of the body and the end, and says when it has fallen behind.
    protocol Consumer: AnyObject, Sendable {
        /// Whether the consumer holds more than it wants: the transfer is held back while any does.
        /// When it changes, the consumer calls ``DataStreamRequest/consumerLagDidChange()``.
        var isLagging: Bool { get }
        /// Takes `data`.
        func receive(_ data: Data)
        /// The request ended.
        func complete(_ completion: Completion)
    }

    private struct StreamState {
        var consumers: [any Consumer] = []
        /// Pieces that arrived while the head was being validated, delivered once it passed.
        var parked: [Data] = []
        var isValidatingHead = false
        /// The attempt whose head is being checked: a verdict for any other is stale.
        var headCheckAttempt: Attempt?
        /// The checked attempt's completion, when it came before the verdict (an
        /// `onHTTPResponse` handler answers on a queue of its own): replayed after it.
        var heldCompletion: (error: URLError?, metrics: RequestMetrics)?
        /// Why the head was rejected; the transfer was cancelled and this is the attempt's error.
        var headRejection: CourierError?
        var hasDelivered = false
        /// How the request ended, once it has; consumers added later get it at once.
        var completion: Completion?
    }

    /// Shares the request's lock: holding the transfer back changes both at once.
    private let streamState: Protected<StreamState>

    /// Whether a piece that a ``DataStreamSerializer`` (or the JSON-lines decoder) fails on
    /// cancels the request, as Alamofire's flag of this name does: the handler gets the
    /// `.failure` event, then the completion, which carries that failure (Alamofire's carries
    /// `explicitlyCancelled`; the cause is more use). `false` (the default) lets the stream go on.
    /// Set it when the request is made: `streamRequest(url, automaticallyCancelOnStreamError: true)`.
    public let automaticallyCancelOnStreamError: Bool

    /// A new stream of the same request, not yet started, as ``DataRequest/repeated()``: without
    /// this one's stream handlers.
    public func repeated() -> DataStreamRequest {
        let again = sessionForRepeat.streamRequest(
            convertible,
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
            interceptor: creationInterceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
        copySettings(to: again)
        return again
    }

    init(
        id: UUID = .makeRandom(),
        convertible: any URLRequestConvertible,
        automaticallyCancelOnStreamError: Bool = false,
        serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?,
        session: Session
    ) {
        let lock = Lock.make()
        streamState = Protected(StreamState(), lock: lock)
        self.automaticallyCancelOnStreamError = automaticallyCancelOnStreamError
        super.init(
            id: id,
            convertible: convertible,
            serializationQueue: serializationQueue,
            eventMonitor: eventMonitor,
            interceptor: interceptor,
            session: session,
            lock: lock
        )
        appendFinishHandler(resumingRequest: false) { [weak self] in self?.deliverCompletion() }
    }

    // MARK: - Consumers

    /// Adds `consumer`; it sees the pieces that arrive from now on. Resumes the request as a
    /// response handler does.
    func addConsumer(_ consumer: any Consumer) {
        let completion = streamState.withLock { state -> Completion? in
            if state.completion == nil { state.consumers.append(consumer) }
            return state.completion
        }
        // Too late for the body: the consumer gets the end at once.
        if let completion {
            consumer.complete(completion)
            return
        }
        // An empty response handler: it resumes the request as adding a handler does.
        appendFinishHandler {}
    }

    /// A consumer fell behind or caught up: holds the transfer back while the head is being
    /// validated or any consumer is behind. Decided and recorded under the request's lock, so
    /// the latest call's view stands however calls race. A consumer's `isLagging` takes the
    /// consumer's own lock inside it; a consumer calls the request only after releasing that.
    func consumerLagDidChange() {
        streamState.withLock(together: mutableState) { stream, state in
            _ = state.machine.holdBack(
                stream.isValidatingHead || stream.consumers.contains { $0.isLagging },
                for: .consumer
            )
        }
        applyStateToTask()
    }

    override var canRetry: Bool { !streamState.withLock { $0.hasDelivered } }

    /// A streamed body counts as present unless the head says it is empty: validators run before it arrives.
    override func receivedNoBody(_ input: ValidationInput) -> Bool { input.head?.expectedContentLength == 0 }

    // MARK: - Transport events

    override func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive head: ResponseHead) {
        let isCurrent = mutableState.withLock { state -> Bool in
            guard state.attempt === attempt else { return false }
            state.responseHead = head
            state.bytesReceived = 0
            state.bytesExpected = head.expectedContentLength
            return true
        }
        guard isCurrent else { return }
        monitor?.request(self, didReceive: head)
        let responseHook = streamState.withLock(together: mutableState) { stream, state in
            stream.isValidatingHead = true
            stream.headCheckAttempt = attempt
            stream.heldCompletion = nil
            stream.headRejection = nil
            stream.parked.removeAll()
            _ = state.machine.holdBack(true, for: .consumer)
            return state.hooks.httpResponse
        }
        // Validators are user code: off the transport's thread, with the transfer held meanwhile.
        applyStateToTask()
        askHTTPResponseHandler(responseHook, about: head) { [self] allowed in
            guard allowed else {
                // Cancelling finishes the request and its consumers; nothing parked is handed
                // on, and a held completion is dropped. An answer about an earlier attempt's
                // head is stale and ignored.
                if streamState.withLock({ $0.headCheckAttempt === attempt }) { cancel() }
                return
            }
            // A request cancelled meanwhile runs no validators and reports nothing more.
            guard !hasFinished else { return }
            validateHead(of: attempt, task: task)
        }
    }

    /// Runs the validators on `attempt`'s head, on the serialization queue, then hands on what
    /// arrived meanwhile, or stops the transfer if they rejected it; then handles the attempt's
    /// completion if it came meanwhile. Does nothing for a stale attempt.
    private func validateHead(of attempt: Attempt, task: any TransportTask) {
        serializationQueue.async { [self] in
            guard streamState.withLock({ $0.headCheckAttempt === attempt }) else { return }
            let rejection = runValidators()
            monitor?.request(self, didValidateWithError: rejection)
            typealias Held = (error: URLError?, metrics: RequestMetrics)
            if let rejection {
                let held = streamState.withLock(together: mutableState) { stream, state -> Held? in
                    guard stream.headCheckAttempt === attempt else { return nil }
                    stream.isValidatingHead = false
                    stream.headRejection = rejection
                    _ = state.machine.holdBack(false, for: .consumer)
                    stream.parked.removeAll()
                    defer { stream.heldCompletion = nil }
                    return stream.heldCompletion
                }
                task.cancel()
                if let held { completeAttempt(of: attempt, error: held.error, metrics: held.metrics) }
                return
            }
            // Hands on the parked pieces while still parking what arrives, until none is left:
            // a piece read meanwhile must not overtake the parked ones.
            var held: Held?
            while true {
                let parked = streamState.withLock { stream -> [Data] in
                    guard stream.headCheckAttempt === attempt else { return [] }
                    guard !stream.parked.isEmpty else {
                        stream.isValidatingHead = false
                        held = stream.heldCompletion
                        stream.heldCompletion = nil
                        return []
                    }
                    defer { stream.parked.removeAll() }
                    return stream.parked
                }
                guard !parked.isEmpty else { break }
                parked.forEach { deliver($0) }
            }
            consumerLagDidChange()
            if let held { completeAttempt(of: attempt, error: held.error, metrics: held.metrics) }
        }
    }

    override func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive data: Data) {
        let isCurrent = mutableState.withLock { state -> Bool in
            guard state.attempt === attempt, !state.machine.hasFinished else { return false }
            state.bytesReceived += Int64(data.count)
            return true
        }
        guard isCurrent else { return }
        announceBodyPiece(data.count)
        reportDownloadProgress()
        // One lock per piece: park it, drop it, or take the consumers to hand it to.
        let consumers = streamState.withLock { state -> [any Consumer] in
            // A rejected head's body never reaches consumers, even what arrives before the cancel takes.
            guard state.headRejection == nil else { return [] }
            guard !state.isValidatingHead else {
                state.parked.append(data)
                return []
            }
            state.hasDelivered = true
            return state.consumers
        }
        consumers.forEach { $0.receive(data) }
    }

    override func attempt(
        _ attempt: Attempt,
        of task: any TransportTask,
        didCompleteWith error: URLError?,
        metrics: RequestMetrics
    ) {
        guard recordAttemptCompletion(of: attempt, metrics: metrics) else { return }
        // While the head is being checked the completion waits for the verdict, which replays it.
        let isHeld = streamState.withLock { stream -> Bool in
            guard stream.isValidatingHead, stream.headCheckAttempt === attempt else { return false }
            stream.heldCompletion = (error, metrics)
            return true
        }
        if !isHeld { completeAttempt(of: attempt, error: error, metrics: metrics) }
    }

    /// Ends an attempt whose head check is over: with its head's rejection, if any, else the
    /// transport's error. (A rejection of an earlier attempt's head is not this one's.)
    private func completeAttempt(of attempt: Attempt, error: URLError?, metrics: RequestMetrics) {
        serializationQueue.async { [self] in
            let rejection = streamState.withLock { $0.headCheckAttempt === attempt ? $0.headRejection : nil }
            let attemptError = rejection ?? error.map(CourierError.attemptFailed)
            monitor?.request(self, didCompleteAttemptWith: metrics, error: attemptError)
            retryOrFinish(error: attemptError)
        }
    }

    private func deliver(_ data: Data) {
        let consumers = streamState.withLock { state -> [any Consumer] in
            state.hasDelivered = true
            return state.consumers
        }
        consumers.forEach { $0.receive(data) }
    }

    private func deliverCompletion() {
        let (request, head, metrics, error, wasCancelled) = mutableState.withLock {
            ($0.requests.last, $0.responseHead, $0.metrics.last, $0.error, $0.machine.state == .cancelled)
        }
        let completion = Completion(
            request: request?.urlRequest,
            head: head,
            metrics: metrics,
            error: error,
            wasCancelled: wasCancelled
        )
        let consumers = streamState.withLock { state -> [any Consumer] in
            state.completion = completion
            defer { state.consumers.removeAll() }
            return state.consumers
        }
        consumers.forEach { $0.complete(completion) }
    }
}

extension DataStreamRequest {
    /// How a stream ended: the last request and response head, metrics, and the error if it failed.
    public struct Completion: Sendable {
        /// The last URLRequest sent.
        public let request: URLRequest?
        /// The response head's status and headers, if one arrived: cheaper than ``response`` on Linux.
        public let head: ResponseHead?
        /// The response head as an `HTTPURLResponse`, if one arrived; built on first use where the
        /// transport gave only its parts (see ``ResponseHead``).
        public var response: HTTPURLResponse? { head?.httpURLResponse }
        /// The last attempt's metrics.
        public let metrics: RequestMetrics?
        /// Why the stream failed; `nil` when the body arrived whole.
        public let error: CourierError?
        /// Whether the request was cancelled (by the caller, or by a handler that threw): then
        /// no piece queued for a handler is delivered, only this completion.
        let wasCancelled: Bool
    }
}

extension DataStreamRequest.Completion {
    /// The end of a stream as `request` describes it now (once finished, its true end): for code
    /// that hands streams on in another form (the `CourierCombine` publishers), and for testing a
    /// handler. (An extension, so the memberwise initializer stays.)
    public init(of request: DataStreamRequest) {
        self.init(
            request: request.lastRequest,
            head: request.responseHead,
            metrics: request.metrics,
            error: request.error,
            wasCancelled: request.isCancelled
        )
    }
}
