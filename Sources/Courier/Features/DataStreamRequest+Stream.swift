import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataStreamRequest {
    /// One event of a stream, with a way to stop it, given to a ``Handler``.
    public struct Stream<Success: Sendable, Failure: Error>: Sendable {
        /// What happened: a piece of the body (or a failure making a value of it), or the end.
        public let event: Event<Success, Failure>
        private let request: DataStreamRequest

        /// An event of `request`'s stream: for code that hands streams on in another form (the
        /// `CourierCombine` publishers), and for testing a handler.
        public init(event: Event<Success, Failure>, request: DataStreamRequest) {
            self.event = event
            self.request = request
        }

        /// Cancels the request; no piece follows but the completion.
        public func cancel() {
            request.cancel()
        }

        /// A handle that cancels the request without keeping it alive, for code that outlives
        /// the handler call (a timer, another task).
        public var token: CancellationToken { CancellationToken(request: request) }
    }

    /// Cancels a stream's request from outside its handler, as Alamofire's token does; does
    /// nothing once the request has finished or is gone.
    public struct CancellationToken: Sendable {
        weak var request: DataStreamRequest?

        /// Cancels the request, if it still exists; its completion carries
        /// ``CourierError/explicitlyCancelled``.
        public func cancel() {
            request?.cancel()
        }
    }

    /// An event of a stream.
    public enum Event<Success: Sendable, Failure: Error>: Sendable {
        /// A value made from the body as it arrived, or why one could not be made.
        case stream(Result<Success, Failure>)
        /// The stream ended; always the last event.
        case complete(Completion)
    }

    /// Receives the events of a stream on the queue it was added with. Throwing cancels the
    /// request and ends this handler's stream: no piece follows, and the completion carries what
    /// was thrown (a ``CourierError`` as it is, anything else as
    /// ``CourierError/SerializationFailureReason/customSerializationFailed(error:)``), as in
    /// Alamofire. What the `.complete` event's call throws is ignored.
    public typealias Handler<Success: Sendable, Failure: Error> = @Sendable (Stream<Success, Failure>) throws -> Void

    /// The largest amount of data a consumer may have waiting before the transfer is held back, by default.
    public static let defaultBufferLimit = 1 << 20

    /// The longest line the JSON-lines consumers accept by default, 1 MiB (not counting the line
    /// break): ``responseStreamDecodable(of:on:decoder:preprocessor:bufferLimit:maximumLineLength:stream:)``
    /// and ``streamingDecodable(_:automaticallyCancelling:decoder:bufferLimit:maximumLineLength:)``. A longer line fails
    /// with ``CourierError/Kind/streamLineTooLong``; pass a larger `maximumLineLength` for
    /// streams whose values are larger.
    public static let defaultMaximumLineLength = 1 << 20

    /// Calls `stream` on `queue` with each piece of the body as it arrives, then with the end.
    ///
    /// While more than `bufferLimit` bytes wait for `stream`, the transfer is held back.
    @discardableResult
    public func responseStream(
        on queue: DispatchQueue = .courierCallbacks,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit,
        stream: @escaping Handler<Data, Never>
    ) -> Self {
        addConsumer(
            HandlerConsumer(
                request: self,
                queue: queue,
                bufferLimit: bufferLimit,
                transform: { [.success($0)] },
                handler: stream
            )
        )
        return self
    }

    /// Calls `stream` on `queue` with the value `serializer` makes of each piece of the body as it
    /// arrives, then with the end. A piece the serializer fails on is a `.failure` event, and the
    /// stream goes on (unless ``DataStreamRequest/automaticallyCancelOnStreamError``). Pieces are as the transport delivered them (see ``DataStreamSerializer``).
    ///
    /// While more than `bufferLimit` bytes wait for `stream`, the transfer is held back.
    @discardableResult
    public func responseStream<Serializer: DataStreamSerializer>(
        using serializer: Serializer,
        on queue: DispatchQueue = .courierCallbacks,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit,
        stream: @escaping Handler<Serializer.SerializedObject, CourierError>
    ) -> Self {
        addConsumer(
            HandlerConsumer(
                request: self,
                queue: queue,
                bufferLimit: bufferLimit,
                reportsParsing: true,
                transform: { data in [serializer.result(serializing: data)] },
                handler: stream
            )
        )
        return self
    }

    /// Calls `stream` with the body as UTF-8 text, each piece cut at a character boundary.
    @discardableResult
    public func responseStreamString(
        on queue: DispatchQueue = .courierCallbacks,
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit,
        stream: @escaping Handler<String, Never>
    ) -> Self {
        let decoder = UTF8PieceDecoder()
        addConsumer(
            HandlerConsumer(
                request: self,
                queue: queue,
                bufferLimit: bufferLimit,
                reportsParsing: true,
                transform: { data in
                    decoder.decode(data).map { [Result<String, Never>.success($0)] } ?? []
                },
                handler: stream
            )
        )
        return self
    }

    /// Calls `stream` with each line of the body decoded as `type`: JSON lines (one JSON value per
    /// line, as `application/x-ndjson` and `application/jsonl` streams send). A line that does not
    /// decode is a `.failure` event and the stream goes on (unless
    /// ``DataStreamRequest/automaticallyCancelOnStreamError``).
    ///
    /// A line longer than `maximumLineLength` bytes (a server sending no line break, say) is a
    /// `.failure` event with ``CourierError/Kind/streamLineTooLong``, and the request is then
    /// cancelled: its bytes are never held beyond the limit.
    @discardableResult
    public func responseStreamDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self,
        on queue: DispatchQueue = .courierCallbacks,
        decoder: any DataDecoder = JSONDecoder(),
        preprocessor: any DataPreprocessor = PassthroughPreprocessor(),
        bufferLimit: Int = DataStreamRequest.defaultBufferLimit,
        maximumLineLength: Int = DataStreamRequest.defaultMaximumLineLength,
        stream: @escaping Handler<T, CourierError>
    ) -> Self {
        let lines = LineSplitter(maximumLineLength: maximumLineLength)
        // Alamofire's `preprocessor:` prepares each piece; here, each line.
        let decodeLine: @Sendable (Data) -> Result<T, CourierError> = { line in
            do {
                return Self.decode(T.self, from: try preprocessor.preprocess(line), with: decoder)
            } catch {
                return .failure(.responseSerializationFailed(.decodingFailed(error: error)))
            }
        }
        addConsumer(
            HandlerConsumer(
                request: self,
                queue: queue,
                bufferLimit: bufferLimit,
                reportsParsing: true,
                transform: { data in
                    do throws(CourierError) {
                        var values = try lines.lines(in: data).map(decodeLine)
                        if let failure = lines.takePendingFailure() {
                            // The good lines before a line too long first, then the failure, which
                            // stops the stream and the transfer once delivered (see `deliver`).
                            values.append(.failure(failure))
                        }
                        return values
                    } catch {
                        // Nothing more can be split: report it, then stop (see `deliver`).
                        return [.failure(error)]
                    }
                },
                finalTransform: {
                    do throws(CourierError) {
                        return try lines.remainder().map { [decodeLine($0)] } ?? []
                    } catch {
                        return [.failure(error)]
                    }
                },
                handler: stream
            )
        )
        return self
    }

    static func decode<T: Decodable>(
        _ type: T.Type,
        from line: Data,
        with decoder: any DataDecoder
    ) -> Result<T, CourierError> {
        do {
            return .success(try decoder.decode(T.self, from: line))
        } catch {
            return .failure(.responseSerializationFailed(.decodingFailed(error: error)))
        }
    }
}

// @unchecked Sendable: `pendingBytes` and `isLagging` sit behind `state`'s lock; `transform` runs
// only on the serial `queue`.
/// Feeds a ``DataStreamRequest/Handler`` on a serial queue, counting what waits for it.
final class HandlerConsumer<Success: Sendable, Failure: Error>: DataStreamRequest.Consumer, @unchecked Sendable {
    /// Held until the stream completes (the request then drops its consumers).
    private let request: DataStreamRequest
    private let queue: DispatchQueue
    private let bufferLimit: Int
    private let transform: (Data) -> [Result<Success, Failure>]
    private let finalTransform: () -> [Result<Success, Failure>]
    private let handler: DataStreamRequest.Handler<Success, Failure>
    /// Whether each value is a serializer's, for the monitor's `didParseStream` (raw pieces are not).
    private let reportsParsing: Bool
    /// `isComplete`: no piece is taken from the transport any more. `isStopped`: no value at
    /// all reaches the handler any more, but the completion (the request was cancelled, or this
    /// stream stopped itself with `stopError`).
    private let state = Protected(
        (pendingBytes: 0, isLagging: false, isComplete: false, isStopped: false, stopError: CourierError?.none)
    )

    init(
        request: DataStreamRequest,
        queue: DispatchQueue,
        bufferLimit: Int,
        reportsParsing: Bool = false,
        transform: @escaping (Data) -> [Result<Success, Failure>],
        finalTransform: @escaping () -> [Result<Success, Failure>] = { [] },
        handler: @escaping DataStreamRequest.Handler<Success, Failure>
    ) {
        self.request = request
        // Serial, so pieces reach the handler in order even on a concurrent queue.
        self.queue = DispatchQueue(label: "Courier.DataStreamRequest.handler", target: queue)
        self.bufferLimit = max(1, bufferLimit)
        self.reportsParsing = reportsParsing
        self.transform = transform
        self.finalTransform = finalTransform
        self.handler = handler
    }

    var isLagging: Bool { state.withLock { $0.isLagging } }

    func receive(_ data: Data) {
        let startsLagging = state.withLock { state -> Bool? in
            guard !state.isComplete else { return nil }
            state.pendingBytes += data.count
            guard !state.isLagging, state.pendingBytes > bufferLimit else { return false }
            state.isLagging = true
            return true
        }
        guard let startsLagging else { return }
        if startsLagging { request.consumerLagDidChange() }
        queue.async { [self] in
            let stillRunning = !state.withLock { $0.isComplete }
            if stillRunning {
                for value in transform(data) where !deliver(value) { break }
            }
            let caughtUp = state.withLock { state -> Bool in
                state.pendingBytes -= data.count
                guard state.isLagging, state.pendingBytes <= bufferLimit / 2 else { return false }
                state.isLagging = false
                return true
            }
            if caughtUp { request.consumerLagDidChange() }
        }
    }

    func complete(_ completion: DataStreamRequest.Completion) {
        // After a cancel no piece may follow, even one queued already; after a success or a
        // failure the queued pieces still come, then the end.
        if completion.wasCancelled {
            state.withLock { state in
                state.isComplete = true
                state.isStopped = true
            }
        }
        queue.async { [self] in
            let wasStopped = state.withLock { state -> Bool in
                state.isComplete = true
                return state.isStopped
            }
            if completion.error == nil, !wasStopped {
                for value in finalTransform() where !deliver(value) { break }
            }
            // A handler that stopped its stream after the transfer had ended: the request
            // finished well, but this stream did not, and its completion says why.
            var completion = completion
            if let stopError = state.withLock({ $0.stopError }), completion.error == nil {
                completion = DataStreamRequest.Completion(
                    request: completion.request,
                    head: completion.head,
                    metrics: completion.metrics,
                    error: stopError,
                    wasCancelled: completion.wasCancelled
                )
            }
            _ = call(.complete(completion))
        }
    }

    /// Hands `value` to the handler; `false` once this stream has stopped: it was cancelled
    /// (even while this piece's values were being handed on), the handler threw, or `value` is a
    /// failure that ends the stream (a line too long, or any with
    /// ``DataStreamRequest/automaticallyCancelOnStreamError``).
    private func deliver(_ value: Result<Success, Failure>) -> Bool {
        guard !state.withLock({ $0.isStopped }) else { return false }
        if reportsParsing, let monitor = request.monitor {
            let parsed = value.mapError {
                ($0 as? CourierError) ?? .responseSerializationFailed(.customSerializationFailed(error: $0))
            }
            monitor.request(request, didParseStream: parsed)
        }
        guard call(.stream(value)) else { return false }
        if case .failure(let error) = value {
            let isFatal = (error as? CourierError)?.kind == .streamLineTooLong
            if isFatal || request.automaticallyCancelOnStreamError {
                stop(dueTo: error)
                return false
            }
        }
        return true
    }

    /// Calls the handler with `event`; `false` if it threw, which ends its stream (only the
    /// completion follows) and cancels the request with what was thrown.
    private func call(_ event: DataStreamRequest.Event<Success, Failure>) -> Bool {
        do {
            try handler(DataStreamRequest.Stream(event: event, request: request))
            return true
        } catch {
            if case .complete = event { return true }
            stop(dueTo: error)
            return false
        }
    }

    /// Ends this handler's stream (no piece follows but the completion) and cancels the request
    /// with `error` as its outcome.
    private func stop(dueTo error: any Error) {
        let error = (error as? CourierError) ?? .responseSerializationFailed(.customSerializationFailed(error: error))
        state.withLock { state in
            state.isComplete = true
            state.isStopped = true
            state.stopError = error
        }
        request.cancel(dueTo: error)
    }
}

// @unchecked Sendable: its state is touched only on the consumer's serial queue (or by the one
// iterator that owns it).
/// Splits bytes into lines (`\n`, with an optional `\r` before it), keeping a partial last line,
/// and fails a line longer than ``maximumLineLength``.
///
/// Linear in its input: each byte is scanned for a line break once (the scan resumes where the
/// last one stopped), and the bytes of finished lines are dropped from the buffer only once
/// they are at least half of it, so moving the rest costs no more than what was consumed.
/// Memory is bounded by the limit plus one piece.
final class LineSplitter: @unchecked Sendable {
    /// The longest line accepted, in bytes, not counting its line break.
    let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Where the partial line starts in `buffer`; the bytes before it are finished lines.
    private var lineStart = 0
    /// Where the search for the next line break resumes: everything from `lineStart` to here
    /// holds none.
    private var scanned = 0
    /// Set once a line was too long: the splitter then drops what it is given, so the error is
    /// reported once.
    private var hasFailed = false
    /// A line too long that followed good lines in the same piece: thrown by the next call (or
    /// by ``remainder()``), after those lines were returned.
    private var pendingFailure: CourierError?

    /// A splitter failing lines longer than `maximumLineLength` bytes (at least 1).
    init(maximumLineLength: Int = DataStreamRequest.defaultMaximumLineLength) {
        self.maximumLineLength = max(1, maximumLineLength)
    }

    /// The complete non-empty lines `data` finishes, in order.
    ///
    /// - Throws: ``CourierError/Kind/streamLineTooLong`` when a line, finished or not, passes
    ///   ``maximumLineLength``; later calls then return nothing.
    func lines(in data: Data) throws(CourierError) -> [Data] {
        if let failure = pendingFailure {
            pendingFailure = nil
            throw failure
        }
        guard !hasFailed else { return [] }
        buffer.append(contentsOf: data)
        var lines: [Data] = []
        let newline = UInt8(ascii: "\n")
        do {
            while let found = buffer[scanned...].firstIndex(of: newline) {
                var end = found
                if end > lineStart, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                try check(length: end - lineStart)
                if end > lineStart { lines.append(Data(buffer[lineStart..<end])) }
                lineStart = found + 1
                scanned = lineStart
            }
            scanned = buffer.count
            // The partial line may end with the `\r` of a `\r\n` still to come.
            let pending = buffer.count - lineStart
            try check(length: buffer.last == UInt8(ascii: "\r") ? pending - 1 : pending)
        } catch {
            // The good lines before the long one are delivered; the failure comes next.
            guard lines.isEmpty else {
                pendingFailure = error
                return lines
            }
            throw error
        }
        compact()
        return lines
    }

    /// The failure waiting to be reported after the lines that came before it, if any; taking
    /// it reports it (later calls return nothing).
    func takePendingFailure() -> CourierError? {
        defer { pendingFailure = nil }
        return pendingFailure
    }

    /// The last line, if the body did not end with a newline (none after a failure).
    func remainder() throws(CourierError) -> Data? {
        if let failure = pendingFailure {
            pendingFailure = nil
            throw failure
        }
        guard !hasFailed else { return nil }
        defer {
            buffer = []
            lineStart = 0
            scanned = 0
        }
        var end = buffer.count
        if end > lineStart, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return end > lineStart ? Data(buffer[lineStart..<end]) : nil
    }

    /// Fails (and drops the buffer) when a line of `length` bytes is too long.
    private func check(length: Int) throws(CourierError) {
        guard length > maximumLineLength else { return }
        hasFailed = true
        buffer = []
        lineStart = 0
        scanned = 0
        throw .streamLineTooLong(limit: maximumLineLength)
    }

    /// Drops the finished lines once they are at least half the buffer: each byte moves at most
    /// as often as the buffer halves, so compaction stays linear overall.
    private func compact() {
        guard lineStart > 0 else { return }
        if lineStart == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 4 * maximumLineLength)
        } else if lineStart >= buffer.count - lineStart {
            buffer.removeSubrange(..<lineStart)
        } else {
            return
        }
        scanned -= lineStart
        lineStart = 0
    }
}

// @unchecked Sendable: `pending` is touched only on the consumer's serial queue.
/// Decodes UTF-8 arriving in pieces, holding back a character split between pieces.
final class UTF8PieceDecoder: @unchecked Sendable {
    private var pending = Data()

    /// The text of `data` up to its last whole character, or `nil` if there is none yet.
    func decode(_ data: Data) -> String? {
        pending.append(data)
        let end = Self.endOfWholeCharacters(in: pending)
        let whole = pending[pending.startIndex..<end]
        pending = Data(pending[end...])
        return whole.isEmpty ? nil : String(decoding: whole, as: UTF8.self)
    }

    /// Where the last complete UTF-8 sequence of `bytes` ends: before a lead byte whose sequence
    /// (at most 4 bytes) is not all there yet.
    static func endOfWholeCharacters(in bytes: Data) -> Data.Index {
        var lead = bytes.endIndex
        for _ in 0..<4 {
            guard lead > bytes.startIndex else { return bytes.endIndex }
            lead = bytes.index(before: lead)
            let byte = bytes[lead]
            guard byte & 0b1100_0000 == 0b1000_0000 else {
                let length = byte < 0b1000_0000 ? 1 : byte >= 0b1111_0000 ? 4 : byte >= 0b1110_0000 ? 3 : 2
                return bytes.endIndex - lead < length ? lead : bytes.endIndex
            }
        }
        return bytes.endIndex  // Not UTF-8: let the decoder replace it.
    }
}
