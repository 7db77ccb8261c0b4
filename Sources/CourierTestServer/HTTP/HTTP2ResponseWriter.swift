import NIOCore
import NIOHTTP1

/// Writes one ``ServerResponse`` to an HTTP/2 stream as `HTTPServerResponsePart`s (head, body, end),
/// applying its delay, pacing and what of its faults HTTP/2 can express.
///
/// HTTP/2 frames the body itself, so there is no `Content-Length` to lie with and no connection to
/// drop: a fault that ends the connection early on HTTP/1.1 (a truncation, a declared length the body
/// does not reach) resets the stream instead, which is how a client sees a cut-off body over HTTP/2.
/// A slow head (`headPacing`) cannot trickle out in pieces (HPACK sends it in one frame), so it is
/// sent whole once the pacing time has passed.
///
/// Guarded by event-loop confinement: created, driven and finished on the stream channel's event loop.
final class HTTP2ResponseWriter {
    private let context: ChannelHandlerContext
    private let response: ServerResponse
    private let omitsBody: Bool
    /// Called once the response ended normally (`.end` written); not after a reset.
    private let onFinish: () -> Void
    private var bodyBytesSent = 0
    private var scheduledStep: Scheduled<Void>?
    private var waitingForWritability = false
    private var isDone = false

    /// Prepares to write `response` in answer to `request`; call ``start()`` to begin.
    init(
        response: ServerResponse,
        request: ServerRequest,
        context: ChannelHandlerContext,
        onFinish: @escaping () -> Void
    ) {
        self.context = context
        self.onFinish = onFinish
        let status = response.status.code
        let hasNoBody = status == 204 || status == 304 || (100..<200).contains(status)
        omitsBody = request.method == .HEAD || hasNoBody
        var response = response
        if !hasNoBody, response.header("Content-Length") == nil {
            switch response.body {
            case .empty: response.headers.append(("Content-Length", "0"))
            case .bytes(let bytes): response.headers.append(("Content-Length", String(bytes.count)))
            case .stream(let stream): stream.length.map { response.headers.append(("Content-Length", String($0))) }
            }
        }
        self.response = response
    }

    /// Begins writing, after the response's delay (and its head pacing, which HTTP/2 sends whole).
    func start() {
        let wait = response.delay + (response.headPacing ?? .zero)
        if wait > .zero {
            schedule(after: wait) { $0.writeHead() }
        } else {
            writeHead()
        }
    }

    /// Resumes a body that was waiting for the stream's flow-control window to open.
    func writabilityChanged() {
        guard waitingForWritability, context.channel.isWritable else { return }
        waitingForWritability = false
        // On a fresh turn of the loop, as the HTTP/1.1 writer does: this can fire inside the pump's
        // own flush.
        context.eventLoop.assumeIsolated().execute { [weak self] in
            guard let self, !self.isDone else { return }
            self.pumpStream()
        }
    }

    /// Stops all pending work; the stream has gone.
    func cancel() {
        isDone = true
        scheduledStep?.cancel()
        scheduledStep = nil
    }

    // MARK: - Writing

    private func writeHead() {
        var headers = HTTPHeaders()
        for (name, value) in response.headers {
            headers.add(name: name, value: value)
        }
        let head = HTTPResponseHead(version: .http2, status: response.status, headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        writeBody()
    }

    private func writeBody() {
        guard !omitsBody else {
            end()
            return
        }
        switch response.body {
        case .empty:
            end()
        case .bytes(let bytes):
            writeBodyBytes(context.channel.allocator.buffer(bytes: bytes))
            if !isDone { end() }
        case .stream:
            pumpStream()
        }
    }

    /// Writes as many chunks as the stream's window takes, then waits for writability or the next
    /// interval, yielding the loop after ``ResponseWriter/maximumBytesPerTurn`` as the HTTP/1 writer does.
    private func pumpStream() {
        guard case .stream(let stream) = response.body else { return }
        var allocator = context.channel.allocator
        var bytesThisTurn = 0
        while !isDone {
            if bytesThisTurn >= ResponseWriter.maximumBytesPerTurn {
                context.flush()
                schedule(after: .zero) { $0.pumpStream() }
                return
            }
            guard context.channel.isWritable else {
                // Set before flushing: the flush can make the stream writable again at once.
                waitingForWritability = true
                context.flush()
                return
            }
            guard let chunk = stream.nextChunk(&allocator) else {
                end()
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

    /// Writes body bytes, resetting the stream once a truncation is due.
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
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(chunk))), promise: nil)
        }
        if truncateNow { reset() }
    }

    /// Ends the stream, unless the body fell short of a declared `Content-Length` (the wrong-length
    /// fault): then the stream is reset, as HTTP/2 cannot end a body short of its declared length.
    private func end() {
        guard !isDone else { return }
        if !omitsBody, let declared = response.header("Content-Length").flatMap({ Int($0) }), declared != bodyBytesSent
        {
            reset()
            return
        }
        isDone = true
        let onFinish = self.onFinish
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).assumeIsolated().whenComplete { _ in
            onFinish()
        }
    }

    /// Flushes what was written, then resets the stream (closing an unfinished stream sends `RST_STREAM`).
    private func reset() {
        isDone = true
        let context = self.context
        context.flush()
        context.close(promise: nil)
    }

    private func schedule(after delay: TimeAmount, _ step: @escaping (HTTP2ResponseWriter) -> Void) {
        scheduledStep = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [weak self] in
            guard let self, !self.isDone else { return }
            step(self)
        }
    }
}
