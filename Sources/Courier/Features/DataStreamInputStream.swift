import Foundation

extension DataStreamRequest {
    /// The body as an `InputStream`, as Alamofire's `asInputStream(bufferSize:)`: for code that
    /// reads a stream (a parser, `JSONSerialization.jsonObject(with:)` given a stream).
    ///
    /// Read it on a thread of your own: `read(_:maxLength:)` blocks until the next piece of the
    /// body arrives, returns `0` at its end, and `-1` with the request's ``CourierError`` in
    /// `streamError` if it fails. Never read it from the main thread or from Swift concurrency's
    /// tasks, whose few threads Courier needs to deliver the body. While more than `bufferSize`
    /// bytes wait to be read, the transfer is held back.
    ///
    /// The stream sees the pieces that arrive after it is made, so make it before the body
    /// starts. Making it starts the request, as adding a response handler does (a request that
    /// does not start by itself, `shouldAutomaticallyResume: false`, needs `resume()`). Closing
    /// it, or letting it go, before the end stops reading without cancelling the request (cancel
    /// it yourself if nothing else reads it). Run-loop scheduling and the stream's delegate are
    /// not supported, so do not hand it to `URLSession` as an upload's body; read it yourself.
    ///
    /// - Parameter bufferSize: The bytes held for the reader before the transfer waits; 1,024 by
    ///   default, as in Alamofire.
    public func asInputStream(bufferSize: Int = 1024) -> InputStream {
        let buffer = InputStreamBuffer(request: self, bufferSize: bufferSize)
        addConsumer(buffer)
        return DataStreamInputStream(buffer: buffer)
    }
}

/// A ``DataStreamRequest``'s body, given to a reader that blocks in `read(_:maxLength:)`.
final class DataStreamInputStream: InputStream {
    private let buffer: InputStreamBuffer

    init(buffer: InputStreamBuffer) {
        self.buffer = buffer
        super.init(data: Data())
    }

    /// A stream let go of unread must not hold the transfer back for the request's other readers.
    deinit { buffer.close() }

    override func open() { buffer.open() }

    /// Stops reading: what is held is dropped and the transfer no longer waits for this reader.
    override func close() { buffer.close() }

    override var streamStatus: Stream.Status { buffer.status }

    override var streamError: (any Error)? { buffer.failure }

    /// `true` while the stream is open: a read may have to wait for the body, or be the one that
    /// reports its end or its failure, as `InputStream`'s documentation allows. A loop on
    /// `hasBytesAvailable` therefore always sees the failure of a body cut short.
    override var hasBytesAvailable: Bool { buffer.hasBytesAvailable }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
        length len: UnsafeMutablePointer<Int>
    ) -> Bool { false }

    /// Waits for the body, then copies up to `len` bytes of it: `0` at its end, `-1` when the
    /// request failed (see `streamError`) or the stream is not open.
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        self.buffer.read(into: buffer, maxLength: len)
    }
}

/// The pieces of the body between the transport and a blocking reader.
///
/// `@unchecked Sendable`: every mutable member is read and written while holding `condition`.
final class InputStreamBuffer: DataStreamRequest.Consumer, @unchecked Sendable {
    private let condition = NSCondition()
    private let request: DataStreamRequest
    private let bufferSize: Int
    /// The pieces not read yet start at `head`: read ones are dropped in batches, so that
    /// reading many small pieces stays linear.
    private var chunks: [Data] = []
    private var head = 0
    /// Bytes of `chunks[head]` already read.
    private var offset = 0
    private var bufferedBytes = 0
    private var lagging = false
    private var completion: DataStreamRequest.Completion?
    private var streamStatus: Stream.Status = .notOpen
    private var streamError: (any Error)?

    init(request: DataStreamRequest, bufferSize: Int) {
        self.request = request
        self.bufferSize = max(1, bufferSize)
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    var status: Stream.Status { locked { streamStatus } }
    var failure: (any Error)? { locked { streamError } }
    var hasBytesAvailable: Bool { locked { streamStatus == .open } }

    // MARK: - DataStreamRequest.Consumer

    var isLagging: Bool { locked { lagging } }

    func receive(_ data: Data) {
        let startsLagging = locked { () -> Bool in
            guard completion == nil, streamStatus != .closed, !data.isEmpty else { return false }
            chunks.append(data)
            bufferedBytes += data.count
            condition.broadcast()
            guard !lagging, bufferedBytes > bufferSize else { return false }
            lagging = true
            return true
        }
        if startsLagging { request.consumerLagDidChange() }
    }

    func complete(_ completion: DataStreamRequest.Completion) {
        locked {
            self.completion = completion
            condition.broadcast()
        }
    }

    // MARK: - The reader's side

    func open() {
        locked { if streamStatus == .notOpen { streamStatus = .open } }
    }

    func close() {
        let wasLagging = locked { () -> Bool in
            streamStatus = .closed
            chunks.removeAll()
            head = 0
            offset = 0
            bufferedBytes = 0
            defer { lagging = false }
            condition.broadcast()
            return lagging
        }
        if wasLagging { request.consumerLagDidChange() }
    }

    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard len > 0 else { return 0 }
        let (count, caughtUp) = locked { () -> (Int, Bool) in
            while streamStatus == .open, head == chunks.count, completion == nil { condition.wait() }
            guard streamStatus == .open else { return (streamStatus == .atEnd ? 0 : -1, false) }
            guard head < chunks.count else {
                if let error = completion?.error {
                    streamError = error
                    streamStatus = .error
                    return (-1, false)
                }
                streamStatus = .atEnd
                return (0, false)
            }
            var copied = 0
            while copied < len, head < chunks.count {
                let first = chunks[head]
                let taken = min(len - copied, first.count - offset)
                first.withUnsafeBytes { bytes in
                    guard let base = bytes.baseAddress else { return }
                    (buffer + copied).update(
                        from: base.advanced(by: offset).assumingMemoryBound(to: UInt8.self),
                        count: taken
                    )
                }
                copied += taken
                offset += taken
                if offset == first.count {
                    chunks[head] = Data()
                    head += 1
                    offset = 0
                }
            }
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= chunks.count {
                chunks.removeFirst(head)
                head = 0
            }
            bufferedBytes -= copied
            // Caught up at half the size, as the other consumers: no hold and release per piece.
            guard lagging, bufferedBytes <= bufferSize / 2 else { return (copied, false) }
            lagging = false
            return (copied, true)
        }
        if caughtUp { request.consumerLagDidChange() }
        return count
    }
}
