import NIOCore
import NIOHTTP1

/// Serves one HTTP/2 stream: reads its request (as HTTP/1-style parts from
/// `HTTP2FramePayloadToHTTP1ServerCodec`), routes it through the same ``Router`` as HTTP/1.1, and
/// writes the answer with an ``HTTP2ResponseWriter``.
///
/// A stream carries exactly one request, so there is no pipelining and no keep-alive to track. The
/// outcomes that end a connection on HTTP/1.1 (close, reset, a hang running out) reset just this
/// stream: the other requests multiplexed on the connection carry on, as they would on a real
/// HTTP/2 server.
///
/// Guarded by event-loop confinement: NIO calls every method on the stream channel's event loop,
/// and the writer and timers it starts run there too.
final class HTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Where the stream is in its one request/response exchange.
    private enum Phase {
        /// Waiting for the request head. Next: `buffering`, `streaming` or `discarding`.
        case idle
        /// Reading a body for a route that buffers it. Next: `responding`, early if it grows too large.
        case buffering(ServerRequest, @Sendable (ServerRequest, ServerState) -> RouteOutcome)
        /// Handing a body to a streaming route's sink. Next: `responding`.
        case streaming(ServerRequest, any RequestBodySink)
        /// Reading a body that is ignored because the answer is already decided. Next: `responding`.
        case discarding(ServerRequest, ServerResponse)
        /// Writing the response, or hanging; anything more the client sends is ignored. Next: `closed`.
        case responding
        /// The stream is closing or closed; everything is ignored.
        case closed
    }

    private let router: Router
    private let state: ServerState
    private var phase: Phase = .idle
    private var writer: HTTP2ResponseWriter?
    private var hangTimer: Scheduled<Void>?

    init(router: Router, state: ServerState) {
        self.router = router
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (phase, unwrapInboundIn(data)) {
        case (.idle, .head(let head)):
            receiveHead(head, context: context)
        case (.buffering(var request, let respond), .body(let chunk)):
            guard request.body.count + chunk.readableBytes <= state.configuration.maximumRequestBodySize else {
                phase = .responding
                var response = Router.errorPage(
                    .payloadTooLarge,
                    "The data value transmitted exceeds the capacity limit."
                )
                // The rest of the body is not wanted: the stream closes once the answer is sent.
                response.closesConnection = true
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
                // The stream stops reading, so its flow-control window stops opening.
                phase = .closed
                hangTimer = context.stopReading(closingAfter: duration)
            case .reset:
                // HTTP/2 has no per-request connection to end: the stream is reset instead.
                close(context)
            }
        case (.buffering(let request, let respond), .end):
            phase = .responding
            perform(respond(request, state), for: request, context: context)
        case (.streaming(let request, let sink), .end):
            phase = .responding
            perform(sink.finish(), for: request, context: context)
        case (.discarding(let request, let response), .end):
            phase = .responding
            startResponse(response, to: request, context: context)
        case (.idle, _), (.buffering, .head), (.streaming, .head), (.discarding, _), (.responding, _), (.closed, _):
            // A second head cannot come on one stream (the codec rejects it); the rest is ignored.
            return
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
        // A malformed request or a stream-level protocol error: this stream cannot go on.
        close(context)
    }

    private func close(_ context: ChannelHandlerContext) {
        phase = .closed
        context.close(promise: nil)
    }

    private func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        state.recordRequest()
        let connection = context.channel.parent ?? context.channel
        var request = ServerRequest(
            head: head,
            remoteAddress: connection.remoteAddress?.ipAddress ?? "127.0.0.1",
            serverAuthority: ConnectionHandler.authority(of: connection.localAddress),
            scheme: "https"
        )
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

    private func perform(_ outcome: RouteOutcome, for request: ServerRequest, context: ChannelHandlerContext) {
        switch outcome {
        case .respond(let response):
            startResponse(response, to: request, context: context)
        case .hang(let duration):
            hangTimer = context.eventLoop.assumeIsolated().scheduleTask(in: duration) { [weak self] in
                self?.close(context)
            }
        case .close, .reset:
            // HTTP/2 has no per-request connection to end: the stream is reset instead.
            close(context)
        }
    }

    private func startResponse(_ response: ServerResponse, to request: ServerRequest, context: ChannelHandlerContext) {
        let closesStream = response.closesConnection
        let writer = HTTP2ResponseWriter(
            response: response.prepared(for: request),
            request: request,
            context: context
        ) { [weak self] in
            self?.writer = nil
            // An answer given before the request ended (`413`) leaves a body nobody reads.
            if closesStream { self?.close(context) }
        }
        self.writer = writer
        writer.start()
    }
}
