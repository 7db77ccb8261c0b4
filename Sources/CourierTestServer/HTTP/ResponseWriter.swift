import NIOCore
import NIOHTTP1
import NIOPosix

/// Writes one ``ServerResponse`` to a connection as raw bytes, applying its delay, pacing and faults.
///
/// The server frames responses itself rather than through NIO's `HTTPResponseEncoder`: fault
/// routes must be able to put anything on the wire (a lying `Content-Length`, half a head, a
/// reset mid-body), which an encoder exists to prevent.
///
/// Guarded by event-loop confinement: created, driven and finished on the channel's event loop.
final class ResponseWriter {
    /// How the body is delimited on the wire.
    private enum Framing {
        case contentLength
        case chunked
        /// HTTP/1.0 without a length: the body ends when the connection closes.
        case connectionClose
        case none
    }

    private let context: ChannelHandlerContext
    private var response: ServerResponse
    private let omitsBody: Bool
    private let keepAlive: Bool
    private let framing: Framing
    private let onFinish: (_ keepAlive: Bool) -> Void
    private var bodyBytesSent = 0
    private var scheduledStep: Scheduled<Void>?
    private var waitingForWritability = false
    private var isDone = false

    /// Prepares to write `response` in answer to `request`; call ``start()`` to begin.
    init(
        response: ServerResponse,
        request: ServerRequest,
        context: ChannelHandlerContext,
        onFinish: @escaping (_ keepAlive: Bool) -> Void
    ) {
        self.context = context
        self.onFinish = onFinish
        let status = response.status.code
        omitsBody = request.method == .HEAD || status == 204 || status == 304 || (100..<200).contains(status)
        let explicitLength = response.header("Content-Length") != nil
        let framing: Framing
        switch response.body {
        case .empty, .bytes:
            framing = .contentLength
        case .stream(let stream):
            if explicitLength || stream.length != nil {
                framing = .contentLength
            } else if request.version.major == 1, request.version.minor == 0 {
                framing = .connectionClose
            } else {
                framing = .chunked
            }
        }
        self.framing = (status == 204 || (100..<200).contains(status)) ? .none : framing
        keepAlive =
            !request.wantsClose && !response.closesConnection && framing != .connectionClose
            && response.truncation == nil
        var response = response
        Self.addFramingHeaders(to: &response, framing: self.framing, keepAlive: keepAlive)
        self.response = response
    }

    /// Begins writing, after the response's delay.
    func start() {
        if response.delay > .zero {
            schedule(after: response.delay) { $0.writeHead() }
        } else {
            writeHead()
        }
    }

    /// Whether the body waits for the client to read what was already sent.
    var isWaitingForWritability: Bool { waitingForWritability }

    /// Resumes a body that was waiting for the socket to drain.
    func writabilityChanged() {
        guard waitingForWritability, context.channel.isWritable else { return }
        waitingForWritability = false
        // On a fresh turn of the loop: this can fire inside the pump's own flush, and resuming
        // there would nest one pump per buffer-full of body.
        context.eventLoop.assumeIsolated().execute { [weak self] in
            guard let self, !self.isDone else { return }
            self.pumpStream()
        }
    }

    /// Stops all pending work; the connection has gone.
    func cancel() {
        isDone = true
        scheduledStep?.cancel()
        scheduledStep = nil
    }

    // MARK: - Head

    private static func addFramingHeaders(to response: inout ServerResponse, framing: Framing, keepAlive: Bool) {
        switch (framing, response.body) {
        case (.contentLength, _) where response.header("Content-Length") != nil:
            break
        case (.contentLength, .empty):
            response.headers.append(("Content-Length", "0"))
        case (.contentLength, .bytes(let bytes)):
            response.headers.append(("Content-Length", String(bytes.count)))
        case (.contentLength, .stream(let stream)):
            response.headers.append(("Content-Length", String(stream.length ?? 0)))
        case (.chunked, _):
            response.headers.append(("Transfer-Encoding", "chunked"))
        case (.connectionClose, _), (.none, _):
            break
        }
        if !keepAlive { response.headers.append(("Connection", "close")) }
    }

    private func serializedHead() -> ByteBuffer {
        var head = "HTTP/1.1 \(response.status.code) \(response.status.reasonPhrase)\r\n"
        for (name, value) in response.headers {
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        return context.channel.allocator.buffer(string: head)
    }

    private func writeHead() {
        let head = serializedHead()
        guard let pacing = response.headPacing, head.readableBytes > 1 else {
            context.write(NIOAny(head), promise: nil)
            writeBody()
            return
        }
        // Slow headers: the head in up to 20 pieces, evenly spaced over the pacing duration.
        let pieceCount = min(20, head.readableBytes)
        let pieceSize = (head.readableBytes + pieceCount - 1) / pieceCount
        var pieces: [ByteBuffer] = []
        var remaining = head
        while let piece = remaining.readSlice(length: min(pieceSize, remaining.readableBytes)), piece.readableBytes > 0
        {
            pieces.append(piece)
        }
        let interval = TimeAmount.nanoseconds(pacing.nanoseconds / Int64(max(1, pieces.count - 1)))
        writeHeadPieces(pieces[...], interval: interval)
    }

    private func writeHeadPieces(_ pieces: ArraySlice<ByteBuffer>, interval: TimeAmount) {
        guard let first = pieces.first else {
            writeBody()
            return
        }
        context.writeAndFlush(NIOAny(first), promise: nil)
        let rest = pieces.dropFirst()
        if rest.isEmpty {
            writeBody()
        } else {
            schedule(after: interval) { $0.writeHeadPieces(rest, interval: interval) }
        }
    }

    // MARK: - Body

    private func writeBody() {
        guard !omitsBody else {
            finish()
            return
        }
        switch response.body {
        case .empty:
            finish()
        case .bytes(let bytes):
            writeBodyBytes(context.channel.allocator.buffer(bytes: bytes))
            if !isDone { finish() }
        case .stream:
            pumpStream()
        }
    }

    /// Writes as many chunks as the socket takes, then waits for writability or the next interval.
    /// After ``maximumBytesPerTurn`` it lets the event loop serve its other connections first: a
    /// client that reads as fast as this writes would otherwise keep the loop to itself.
    private func pumpStream() {
        guard case .stream(let stream) = response.body else { return }
        var allocator = context.channel.allocator
        var bytesThisTurn = 0
        while !isDone {
            if bytesThisTurn >= Self.maximumBytesPerTurn {
                context.flush()
                schedule(after: .zero) { $0.pumpStream() }
                return
            }
            guard context.channel.isWritable else {
                // Flushing can make the channel writable again before it returns, so the flag must
                // be set first; if the flush already drained the buffer, the writability callback
                // has resumed the pump and this call has nothing left to do.
                waitingForWritability = true
                context.flush()
                return
            }
            guard let chunk = stream.nextChunk(&allocator) else {
                if framing == .chunked {
                    context.write(NIOAny(context.channel.allocator.buffer(string: "0\r\n\r\n")), promise: nil)
                }
                finish()
                return
            }
            bytesThisTurn += chunk.readableBytes
            writeBodyBytes(chunk)
            if stream.interval > .zero, !isDone {
                context.flush()
                schedule(after: stream.interval) { $0.pumpStream() }
                return
            }
        }
    }

    /// Writes body bytes with the response's framing, ending the connection if a truncation is due.
    private func writeBodyBytes(_ chunk: ByteBuffer) {
        var chunk = chunk
        var truncateNow = false
        if let truncation = response.truncation, bodyBytesSent + chunk.readableBytes >= truncation.afterBodyBytes {
            chunk =
                chunk.getSlice(at: chunk.readerIndex, length: max(0, truncation.afterBodyBytes - bodyBytesSent))
                ?? chunk
            truncateNow = true
        }
        bodyBytesSent += chunk.readableBytes
        if chunk.readableBytes > 0 {
            if framing == .chunked {
                context.write(
                    NIOAny(context.channel.allocator.buffer(string: String(chunk.readableBytes, radix: 16) + "\r\n")),
                    promise: nil
                )
                context.write(NIOAny(chunk), promise: nil)
                context.write(NIOAny(context.channel.allocator.buffer(string: "\r\n")), promise: nil)
            } else {
                context.write(NIOAny(chunk), promise: nil)
            }
        }
        if truncateNow, let truncation = response.truncation {
            endConnection(reset: truncation.reset)
        }
    }

    // MARK: - Ending

    private func finish() {
        guard !isDone else { return }
        isDone = true
        let keepAlive = self.keepAlive
        let onFinish = self.onFinish
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete {
            _ in
            onFinish(keepAlive)
        }
    }

    /// Flushes what was written, then closes or resets the connection.
    private func endConnection(reset: Bool) {
        isDone = true
        let context = self.context
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete {
            _ in
            ConnectionHandler.close(context, reset: reset)
        }
    }

    /// How much one turn of the event loop writes of a streamed body before yielding.
    static let maximumBytesPerTurn = 256 * 1024

    private func schedule(after delay: TimeAmount, _ step: @escaping (ResponseWriter) -> Void) {
        scheduledStep = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [weak self] in
            guard let self, !self.isDone else { return }
            step(self)
        }
    }
}
