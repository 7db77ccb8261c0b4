import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP connection that sends raw bytes and records exactly what comes back and how the
/// connection ended, for fault routes whose answers no HTTP client would accept.
enum RawConnection {
    /// How the server ended the connection.
    enum Ending: Equatable, Sendable {
        /// An orderly close (FIN).
        case closed
        /// A reset (RST), seen as ECONNRESET.
        case reset
        /// Still open when the time ran out; the test closed it.
        case timedOut
    }

    /// What a raw exchange produced: the bytes received, with when each arrived, and the ending.
    struct Result: Sendable {
        var bytes: [UInt8]
        var ending: Ending
        /// Seconds from the send to each read, in order.
        var arrivalTimes: [Double]

        var text: String { String(decoding: bytes, as: UTF8.self) }

        /// The head (before the blank line) and the body after it.
        var head: String {
            guard let range = text.range(of: "\r\n\r\n") else { return text }
            return String(text[..<range.lowerBound])
        }
        var body: [UInt8] {
            guard let index = bytes.indices.first(where: { bytes[$0...].starts(with: [13, 10, 13, 10]) }) else {
                return []
            }
            return Array(bytes[(index + 4)...])
        }
    }

    /// Connects to `port`, sends `request`, and reads until the server closes, `timeout` passes, or
    /// (when given) `byteLimit` bytes have arrived, when it hangs up itself (ending `.timedOut`).
    static func exchange(
        port: Int,
        request: String,
        timeout: TimeAmount = .seconds(30),
        byteLimit: Int? = nil
    ) async throws -> Result {
        let collector = Collector(byteLimit: byteLimit)
        // The request is written, and the time limit started, by the handler as soon as the
        // connection is up, on the event loop: not after this task resumes. With the whole suite
        // on two cores, CPU-bound tests can hold Swift's task pool for longer than the server's
        // idle bound, and a server that closed a silent connection was once read as no answer.
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RecordingHandler(collector: collector, request: request, timeout: timeout)
                    )
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        try? await channel.closeFuture.get()
        collector.finish(.closed)
        return collector.result
    }

    /// The shared record of one exchange.
    final class Collector: Sendable {
        private let state = NIOLockedValueBox<(start: NIODeadline, result: Result, ended: Bool)>(
            (.now(), Result(bytes: [], ending: .closed, arrivalTimes: []), false)
        )
        let byteLimit: Int?

        init(byteLimit: Int?) {
            self.byteLimit = byteLimit
        }

        func markStart() { state.withLockedValue { $0.start = .now() } }

        /// Records a read; returns `true` once the byte limit is reached.
        func append(_ buffer: ByteBuffer) -> Bool {
            state.withLockedValue { state in
                state.result.bytes.append(contentsOf: buffer.readableBytesView)
                state.result.arrivalTimes.append(Double((NIODeadline.now() - state.start).nanoseconds) / 1e9)
                return byteLimit.map { state.result.bytes.count >= $0 } ?? false
            }
        }

        /// Records the ending, keeping the first one reported.
        func finish(_ ending: Ending) {
            state.withLockedValue { state in
                guard !state.ended else { return }
                state.ended = true
                state.result.ending = ending
            }
        }

        var result: Result { state.withLockedValue { $0.result } }
    }

    /// Sends the request once connected, then feeds reads and errors into a ``Collector`` until
    /// the connection ends or the time limit passes.
    final class RecordingHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let collector: Collector
        private let request: String
        private let timeout: TimeAmount
        private var timer: Scheduled<Void>?

        init(collector: Collector, request: String, timeout: TimeAmount) {
            self.collector = collector
            self.request = request
            self.timeout = timeout
        }

        func channelActive(context: ChannelHandlerContext) {
            collector.markStart()
            if !request.isEmpty {
                // A failed write means the server closed first: the ending records that.
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
            }
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [collector] in
                collector.finish(.timedOut)
                context.close(promise: nil)
            }
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            timer?.cancel()
            timer = nil
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if collector.append(unwrapInboundIn(data)) {
                collector.finish(.timedOut)
                context.close(promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let error = error as? IOError, error.errnoCode == ECONNRESET {
                collector.finish(.reset)
            }
            context.close(promise: nil)
        }
    }
}
