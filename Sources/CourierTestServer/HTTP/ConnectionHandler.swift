import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves one connection: reads requests in order, routes them, and writes each answer before
/// reading on (requests pipelined behind one wait their turn).
///
/// Guarded by event-loop confinement: NIO calls every method on the channel's event loop, and the
/// writer and timers it starts run there too.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    /// Where the connection is in its request/response cycle.
    private enum Phase {
        /// Waiting for a request head. Next: `receiving`.
        case idle
        /// Reading a body for a route that buffers it. Next: `responding`, or closed if it grows too large.
        case buffering(ServerRequest, @Sendable (ServerRequest, ServerState) -> RouteOutcome)
        /// Handing a body to a streaming route's sink. Next: `responding`.
        case streaming(ServerRequest, any RequestBodySink)
        /// Reading a body that is ignored because the answer is already decided. Next: `responding`.
        case discarding(ServerRequest, ServerResponse)
        /// Writing a response, or hanging. Parts that arrive now are queued. Next: `idle` or closed.
        case responding
        /// Writing an answer given before the request ended (`413`); the rest of the request is
        /// dropped, not queued, and the connection closes after the answer. Next: closed.
        case rejecting
        /// The connection is closing or closed; everything is ignored.
        case closed
    }

    private let router: Router
    private let state: ServerState
    /// `https` behind TLS, else `http`; requests carry it so echoed URLs match what the client used.
    private let scheme: String
    private var phase: Phase = .idle
    private var queuedParts: [HTTPServerRequestPart] = []
    /// Body bytes in `queuedParts`; past the request body limit the connection closes.
    private var queuedBodyBytes = 0
    /// Whether the decoder met bytes it cannot parse: what came before is answered, then a 400.
    private var parseFailed = false
    private var writer: ResponseWriter?
    private var hangTimer: Scheduled<Void>?

    init(router: Router, state: ServerState, scheme: String = "http") {
        self.router = router
        self.state = state
        self.scheme = scheme
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        // A part waits behind an answer in progress and behind parts already waiting, so
        // pipelined requests are answered in the order they came.
        switch phase {
        case .responding:
            enqueue(part, context: context)
        case .idle where !queuedParts.isEmpty:
            enqueue(part, context: context)
        case .idle, .buffering, .streaming, .discarding, .rejecting, .closed:
            handle(part, context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // Bounded in time: a connection with no request for `maximumWait`, or a response the
        // client has not read for that long, is closed.
        switch (idle, phase) {
        case (.read, .idle) where queuedParts.isEmpty:
            close(context)
        case (.write, .responding) where writer?.isWaitingForWritability == true:
            close(context)
        default:
            break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        writer?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        phase = .closed
        writer?.cancel()
        writer = nil
        hangTimer?.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            close(context)
            return
        }
        // After a parse error the byte stream cannot be trusted: answer the requests read before
        // it, then a 400, then close.
        parseFailed = true
        switch phase {
        case .idle where queuedParts.isEmpty:
            sendBadRequest(context: context)
        case .responding, .idle:
            break  // `drainQueuedParts` sends the 400 once the queue is empty.
        case .buffering, .streaming, .discarding:
            sendBadRequest(context: context)  // The request in progress can never end.
        case .rejecting, .closed:
            close(context)
        }
    }

    private func enqueue(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        queuedParts.append(part)
        if case .body(let chunk) = part { queuedBodyBytes += chunk.readableBytes }
        if queuedBodyBytes > state.configuration.maximumRequestBodySize {
            close(context)
        }
    }

    private func sendBadRequest(context: ChannelHandlerContext) {
        phase = .closed
        let body = Array("Bad Request: the request could not be parsed.\n".utf8)
        let head =
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\n\r\n"
        var buffer = context.channel.allocator.buffer(string: head)
        buffer.writeBytes(body)
        context.writeAndFlush(NIOAny(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    private func close(_ context: ChannelHandlerContext) {
        phase = .closed
        queuedParts.removeAll()
        context.close(promise: nil)
    }

    // MARK: - Reading

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch (phase, part) {
        case (.closed, _), (.rejecting, _):
            return
        case (.responding, _):
            queuedParts.append(part)
        case (.idle, .head(let head)):
            receiveHead(head, context: context)
        case (.idle, _):
            // Body or end without a head: the decoder never produces this.
            return
        case (.buffering(var request, let respond), .body(let chunk)):
            guard request.body.count + chunk.readableBytes <= state.configuration.maximumRequestBodySize else {
                var response = Router.errorPage(
                    .payloadTooLarge,
                    "The data value transmitted exceeds the capacity limit."
                )
                response.closesConnection = true
                phase = .rejecting
                startResponse(response, to: request, context: context)
                return
            }
            phase = .closed  // Release the copy-on-write reference while appending.
            request.body.append(contentsOf: chunk.readableBytesView)
            phase = .buffering(request, respond)
        case (.streaming(_, let sink), .body(let chunk)):
            switch sink.consume(chunk) {
            case .keepReading:
                break
            case .stopReading(let duration):
                // Parts the decoder already holds are ignored; nothing more is read.
                phase = .closed
                hangTimer = context.stopReading(closingAfter: duration)
            case .reset:
                phase = .closed
                Self.close(context, reset: true)
            }
        case (.discarding, .body):
            return
        case (.buffering(let request, let respond), .end):
            phase = .responding
            perform(respond(request, state), for: request, context: context)
        case (.streaming(let request, let sink), .end):
            phase = .responding
            perform(sink.finish(), for: request, context: context)
        case (.discarding(let request, let response), .end):
            phase = .responding
            startResponse(response, to: request, context: context)
        case (.buffering, .head), (.streaming, .head), (.discarding, .head):
            // The decoder ends each request before the next head.
            return
        }
    }

    private func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        state.recordRequest()
        var request = ServerRequest(
            head: head,
            remoteAddress: context.channel.remoteAddress?.ipAddress ?? "127.0.0.1",
            serverAuthority: Self.authority(of: context.channel.localAddress),
            scheme: scheme
        )
        if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            context.writeAndFlush(
                NIOAny(context.channel.allocator.buffer(string: "HTTP/1.1 100 Continue\r\n\r\n")),
                promise: nil
            )
        }
        // The server tunnels nothing: as a proxy that wants credentials it never takes, it
        // answers `CONNECT` with `407`, so that clients' proxy failures can be tested.
        if head.method == .CONNECT {
            var response = ServerResponse(
                status: .proxyAuthenticationRequired,
                headers: [("Proxy-Authenticate", "Basic realm=\"courier-test-proxy\"")]
            )
            response.closesConnection = true
            phase = .discarding(request, response)
            return
        }
        switch router.resolve(method: head.method, path: request.path) {
        case .response(let response):
            phase = .discarding(request, response)
        case .route(let route, let parameters):
            request.parameters = parameters
            switch route.handler {
            case .buffered(let respond):
                phase = .buffering(request, respond)
            case .streaming(let makeSink):
                phase = .streaming(request, makeSink(request, state))
            }
        }
    }

    // MARK: - Answering

    private func perform(_ outcome: RouteOutcome, for request: ServerRequest, context: ChannelHandlerContext) {
        switch outcome {
        case .respond(let response):
            startResponse(response, to: request, context: context)
        case .hang(let duration):
            hangTimer = context.eventLoop.assumeIsolated().scheduleTask(in: duration) {
                context.close(promise: nil)
            }
        case .close:
            phase = .closed
            Self.close(context, reset: false)
        case .reset:
            phase = .closed
            Self.close(context, reset: true)
        }
    }

    private func startResponse(_ response: ServerResponse, to request: ServerRequest, context: ChannelHandlerContext) {
        let writer = ResponseWriter(
            response: response.prepared(for: request),
            request: request,
            context: context
        ) { [weak self] keepAlive in
            self?.responseFinished(keepAlive: keepAlive, context: context)
        }
        self.writer = writer
        writer.start()
    }

    private func responseFinished(keepAlive: Bool, context: ChannelHandlerContext) {
        writer = nil
        if case .rejecting = phase {
            phase = .closed
            context.close(promise: nil)
            return
        }
        guard case .responding = phase else { return }
        guard keepAlive else {
            phase = .closed
            context.close(promise: nil)
            return
        }
        phase = .idle
        // Replay pipelined parts on a fresh turn of the loop: a write can complete synchronously,
        // and answering the next request from inside the previous one's completion would re-enter.
        context.eventLoop.assumeIsolated().execute { [weak self] in
            self?.drainQueuedParts(context: context)
        }
    }

    private func drainQueuedParts(context: ChannelHandlerContext) {
        while !queuedParts.isEmpty {
            switch phase {
            case .responding, .rejecting, .closed:
                return
            case .idle, .buffering, .streaming, .discarding:
                let part = queuedParts.removeFirst()
                if case .body(let chunk) = part { queuedBodyBytes -= chunk.readableBytes }
                handle(part, context: context)
            }
        }
        if parseFailed, case .idle = phase { sendBadRequest(context: context) }
    }

    /// `host:port` of a socket address, with IPv6 hosts in brackets.
    static func authority(of address: SocketAddress?) -> String {
        guard let address, let host = address.ipAddress, let port = address.port else { return "localhost" }
        if case .v6 = address { return "[\(host)]:\(port)" }
        return "\(host):\(port)"
    }

    /// Closes the connection; with `reset`, with `SO_LINGER` 0 so the peer sees an RST, not a FIN.
    static func close(_ context: ChannelHandlerContext, reset: Bool) {
        guard reset, let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

extension ChannelHandlerContext {
    /// Reads nothing more from the channel, so the peer's writes back up, and closes it after
    /// `duration`; returns the close, to cancel if the channel goes first.
    func stopReading(closingAfter duration: TimeAmount) -> Scheduled<Void> {
        try? channel.syncOptions?.setOption(.autoRead, value: false)
        return eventLoop.assumeIsolated().scheduleTask(in: duration) { [self] in close(promise: nil) }
    }
}
