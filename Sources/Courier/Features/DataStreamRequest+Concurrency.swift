import Foundation

extension DataStreamRequest {
    /// The body's pieces as they arrive: `for try await data in request.streamingData() { … }`.
    ///
    /// The loop ends when the body has all arrived and throws the request's ``CourierError`` if
    /// it fails. Leaving the loop early, or cancelling the task running it, cancels the request.
    /// While more than `bufferLimit` bytes wait for the loop, the transfer is held back. With
    /// `automaticallyCancelling: false`, leaving the loop or cancelling its task ends the loop only,
    /// and the request goes on (for another consumer, say).
    public func streamingData(
        automaticallyCancelling: Bool = true,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) -> DataStreamSequence<Data> {
        // The empty piece that marks the end is not a piece of the body.
        DataStreamSequence(request: self, bufferLimit: bufferLimit, automaticallyCancelling: automaticallyCancelling) {
            { data in data.isEmpty ? [] : [data] }
        }
    }

    /// The body as UTF-8 text, in pieces cut at character boundaries.
    public func streamingStrings(
        automaticallyCancelling: Bool = true,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) -> DataStreamSequence<String> {
        DataStreamSequence(request: self, bufferLimit: bufferLimit, automaticallyCancelling: automaticallyCancelling) {
            let decoder = UTF8PieceDecoder()
            return { data in decoder.decode(data).map { [$0] } ?? [] }
        }
    }

    /// Each piece of the body as `serializer` makes it, as Alamofire's `streamingResponses(serializedUsing:)`
    /// (whose events become the elements and the end of the loop).
    ///
    /// A piece the serializer fails on is a `.failure` element and the loop goes on, as with
    /// `responseStream(using:)`; the loop ends when the body has all arrived and throws the
    /// request's ``CourierError`` if it fails. Leaving the loop early, or cancelling its task,
    /// cancels the request unless `automaticallyCancelling` is `false`.
    public func streamingResponses<Serializer: DataStreamSerializer>(
        serializedUsing serializer: Serializer,
        automaticallyCancelling: Bool = true,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit
    ) -> DataStreamSequence<Result<Serializer.SerializedObject, CourierError>> {
        DataStreamSequence(request: self, bufferLimit: bufferLimit, automaticallyCancelling: automaticallyCancelling) {
            { data in data.isEmpty ? [] : [serializer.result(serializing: data)] }
        }
    }

    /// Each line of the body decoded as `type` (JSON lines), in order. A line that does not
    /// decode ends the loop with ``CourierError/Kind/responseSerializationFailed`` and cancels the request.
    ///
    /// A line longer than `maximumLineLength` bytes, not counting its line break (a server
    /// sending no line break, say), ends the loop with ``CourierError/Kind/streamLineTooLong``
    /// and cancels the request, so a stream's bytes are never held beyond the limit.
    public func streamingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self,
        automaticallyCancelling: Bool = true,
        decoder: any DataDecoder = JSONDecoder(),
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit,
        maximumLineLength: Int = DataStreamRequest.defaultMaximumLineLength
    ) -> DataStreamSequence<T> {
        DataStreamSequence(request: self, bufferLimit: bufferLimit, automaticallyCancelling: automaticallyCancelling) {
            let lines = LineSplitter(maximumLineLength: maximumLineLength)
            return { data in
                // An empty piece marks the end: the last line may lack its newline.
                let found = data.isEmpty ? try lines.remainder().map { [$0] } ?? [] : try lines.lines(in: data)
                return try found.map { try DataStreamRequest.decode(T.self, from: $0, with: decoder).get() }
            }
        }
    }
}

/// The values of a ``DataStreamRequest``'s body as an `AsyncSequence`: made by
/// ``DataStreamRequest/streamingData(automaticallyCancelling:bufferLimit:)``,
/// ``DataStreamRequest/streamingStrings(automaticallyCancelling:bufferLimit:)`` and
/// ``DataStreamRequest/streamingDecodable(_:automaticallyCancelling:decoder:bufferLimit:maximumLineLength:)``.
///
/// The body arrives once: an iterator sees what arrives after it was made. Leaving the loop early,
/// or cancelling its task, cancels the request, unless the sequence was made with
/// `automaticallyCancelling: false`: the loop then ends and the request goes on for its other
/// consumers.
public struct DataStreamSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// Turns each piece of the body into values; an empty piece means the body has ended.
    typealias Transform = (Data) throws -> [Element]

    private let request: DataStreamRequest
    private let bufferLimit: Int
    private let automaticallyCancelling: Bool
    private let makeTransform: @Sendable () -> Transform

    init(
        request: DataStreamRequest,
        bufferLimit: Int,
        automaticallyCancelling: Bool = true,
        makeTransform: @escaping @Sendable () -> Transform
    ) {
        self.request = request
        self.bufferLimit = bufferLimit
        self.automaticallyCancelling = automaticallyCancelling
        self.makeTransform = makeTransform
    }

    /// Iterates the values that arrive from now on, starting the request if it has not started
    /// (as adding a response handler does). Each iterator has a buffer of its own.
    public func makeAsyncIterator() -> AsyncIterator {
        let buffer = StreamBuffer(
            request: request,
            bufferLimit: bufferLimit,
            automaticallyCancelling: automaticallyCancelling
        )
        request.addConsumer(buffer)
        return AsyncIterator(buffer: buffer, transform: makeTransform(), termination: Termination(buffer: buffer))
    }

    /// Gives the values one at a time, waiting for the body as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let buffer: StreamBuffer
        fileprivate let transform: Transform
        fileprivate let termination: Termination
        private var ready: [Element] = []
        private var isDone = false

        fileprivate init(buffer: StreamBuffer, transform: @escaping Transform, termination: Termination) {
            self.buffer = buffer
            self.transform = transform
            self.termination = termination
        }

        /// The next value, `nil` after the last, or the request's error.
        public mutating func next() async throws -> Element? {
            while ready.isEmpty {
                guard !isDone else { return nil }
                let chunk = try await buffer.next()
                do {
                    ready = try transform(chunk ?? Data())
                } catch {
                    isDone = true
                    termination.buffer.stop()
                    throw (error as? CourierError)
                        ?? .responseSerializationFailed(.customSerializationFailed(error: error))
                }
                if chunk == nil {
                    isDone = true
                    termination.isFinished = true
                }
            }
            return ready.removeFirst()
        }
    }
}

// @unchecked Sendable: `isFinished` is only set by the iterator that owns this object.
/// Cancels the request when the iterator goes away before the body ended (the loop was left).
final class Termination: @unchecked Sendable {
    let buffer: StreamBuffer
    var isFinished = false

    init(buffer: StreamBuffer) {
        self.buffer = buffer
    }

    deinit {
        if !isFinished { buffer.stop() }
    }
}

/// Holds the pieces of the body between the transport and an async loop.
final class StreamBuffer: DataStreamRequest.Consumer, Sendable {
    private struct State {
        var chunks: [Data] = []
        var bufferedBytes = 0
        var isLagging = false
        var completion: DataStreamRequest.Completion?
        /// The loop stopped without cancelling the request: nothing more is kept or given.
        var isDetached = false
        var waiter: CheckedContinuation<Data?, any Error>?
    }

    private let request: DataStreamRequest
    private let bufferLimit: Int
    /// Whether stopping (the loop left early, its task cancelled) cancels the request, or only
    /// detaches this buffer from it.
    private let automaticallyCancelling: Bool
    private let state = Protected(State())

    init(request: DataStreamRequest, bufferLimit: Int, automaticallyCancelling: Bool = true) {
        self.request = request
        self.bufferLimit = max(1, bufferLimit)
        self.automaticallyCancelling = automaticallyCancelling
    }

    /// The loop is done with the stream before its end: cancels the request, or, when not
    /// ``automaticallyCancelling``, lets the request go on without this buffer. A detached
    /// buffer drops what it held and stops holding the transfer back, so other consumers are
    /// not stalled by a loop that has gone.
    func stop() {
        guard !automaticallyCancelling else {
            request.cancel()
            return
        }
        let (waiter, wasLagging) = state.withLock { state -> (CheckedContinuation<Data?, any Error>?, Bool) in
            guard state.completion == nil, !state.isDetached else { return (nil, false) }
            state.isDetached = true
            state.chunks.removeAll()
            state.bufferedBytes = 0
            defer {
                state.isLagging = false
                state.waiter = nil
            }
            return (state.waiter, state.isLagging)
        }
        waiter?.resume(returning: nil)
        if wasLagging { request.consumerLagDidChange() }
    }

    var isLagging: Bool { state.withLock { $0.isLagging } }

    func receive(_ data: Data) {
        let (waiter, startsLagging) = state.withLock { state -> (CheckedContinuation<Data?, any Error>?, Bool) in
            guard state.completion == nil, !state.isDetached else { return (nil, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            state.chunks.append(data)
            state.bufferedBytes += data.count
            guard !state.isLagging, state.bufferedBytes > bufferLimit else { return (nil, false) }
            state.isLagging = true
            return (nil, true)
        }
        waiter?.resume(returning: data)
        if startsLagging { request.consumerLagDidChange() }
    }

    func complete(_ completion: DataStreamRequest.Completion) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            state.completion = completion
            defer { state.waiter = nil }
            return state.waiter
        }
        guard let waiter else { return }
        if let error = completion.error {
            waiter.resume(throwing: error)
        } else {
            waiter.resume(returning: nil)
        }
    }

    /// The next piece, `nil` at the end, or the request's error. Cancelling the waiting task
    /// cancels the request, which ends the wait with ``CourierError/Kind/explicitlyCancelled``.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                enum Outcome {
                    case chunk(Data, caughtUp: Bool)
                    case end(CourierError?)
                    case wait
                }
                let outcome = state.withLock { state -> Outcome in
                    if !state.chunks.isEmpty {
                        let chunk = state.chunks.removeFirst()
                        state.bufferedBytes -= chunk.count
                        let caughtUp = state.isLagging && state.bufferedBytes <= bufferLimit / 2
                        if caughtUp { state.isLagging = false }
                        return .chunk(chunk, caughtUp: caughtUp)
                    }
                    if state.isDetached { return .end(nil) }
                    if let completion = state.completion { return .end(completion.error) }
                    state.waiter = continuation
                    return .wait
                }
                switch outcome {
                case .chunk(let chunk, let caughtUp):
                    if caughtUp { request.consumerLagDidChange() }
                    continuation.resume(returning: chunk)
                case .end(let error?):
                    continuation.resume(throwing: error)
                case .end(nil):
                    continuation.resume(returning: nil)
                case .wait:
                    break
                }
            }
        } onCancel: {
            stop()
        }
    }
}
