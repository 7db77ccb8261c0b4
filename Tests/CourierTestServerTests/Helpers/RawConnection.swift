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
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RecordingHandler(collector: collector))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        collector.markStart()
        if !request.isEmpty {
            do {
                try await channel.writeAndFlush(channel.allocator.buffer(string: request))
            } catch {
                // The server closed first (on a loaded machine, a bound it sets may pass before
                // the write): that is how the exchange ended, recorded below, not a failure of it.
            }
        }
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            collector.finish(.timedOut)
            channel.close(promise: nil)
        }
        try? await channel.closeFuture.get()
        timer.cancel()
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

    /// Feeds reads and errors into a ``Collector``.
    final class RecordingHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let collector: Collector

        init(collector: Collector) { self.collector = collector }

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
