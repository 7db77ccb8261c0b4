import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A server on 127.0.0.1 that answers every request with the same bytes, written as given: for
/// testing how a client takes a response no well-behaved server sends (two different
/// `Content-Length`s, `Content-Length` beside `chunked`, raw bytes in a header).
///
/// It reads a request's head (up to 64 KiB), writes ``response``, and closes the connection.
/// Use ``withRunningServer(response:_:)-(String,_)``, which stops it whatever happens.
public final class RawResponseServer: Sendable {
    /// Where it listens, e.g. `http://127.0.0.1:54321`.
    public let baseURL: URL
    /// The bytes written for every request.
    public let response: [UInt8]
    private let channel: any Channel
    /// How many request heads it has answered; connections count into it.
    private let answered: NIOLockedValueBox<Int>

    private init(baseURL: URL, response: [UInt8], channel: any Channel, answered: NIOLockedValueBox<Int>) {
        self.baseURL = baseURL
        self.response = response
        self.channel = channel
        self.answered = answered
    }

    /// Starts a server answering `response` (an HTTP/1.1 response, head and body, CRLFs included),
    /// runs `body` with it, and stops it.
    public static func withRunningServer<Result>(
        response: String,
        _ body: (RawResponseServer) async throws -> Result
    ) async throws -> Result {
        try await withRunningServer(response: Array(response.utf8), body)
    }

    /// Starts a server answering `response` byte for byte, runs `body` with it, and stops it.
    public static func withRunningServer<Result>(
        response: [UInt8],
        _ body: (RawResponseServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(response: response)
        do {
            let result = try await body(server)
            try? await server.channel.close()
            return result
        } catch {
            try? await server.channel.close()
            throw error
        }
    }

    /// The absolute URL of `pathAndQuery` on this server.
    public func url(_ pathAndQuery: String = "/") -> URL {
        let path = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        return URL(string: baseURL.absoluteString + path) ?? baseURL
    }

    /// How many request heads the server has answered.
    public var answeredRequests: Int { answered.withLockedValue { $0 } }

    private static func start(response: [UInt8]) async throws -> RawResponseServer {
        let counter = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Answerer(response: response, counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = channel.localAddress?.port ?? 0
        let baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
        return RawResponseServer(baseURL: baseURL, response: response, channel: channel, answered: counter)
    }

    /// Reads one request head, then writes the response and closes.
    private final class Answerer: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        static let headLimit = 64 * 1024
        let response: [UInt8]
        let counter: NIOLockedValueBox<Int>
        var received: [UInt8] = []
        var hasAnswered = false

        init(response: [UInt8], counter: NIOLockedValueBox<Int>) {
            self.response = response
            self.counter = counter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !hasAnswered else { return }
            let buffer = unwrapInboundIn(data)
            // Looks for the blank line only in what is new (and the three bytes before it).
            let searchStart = max(0, received.count - 3)
            received.append(contentsOf: buffer.readableBytesView)
            let endOfHead: [UInt8] = [13, 10, 13, 10]
            let complete =
                received.count - 4 >= searchStart
                && (searchStart...(received.count - 4)).contains {
                    received[$0..<($0 + 4)].elementsEqual(endOfHead)
                }
            guard complete || received.count > Self.headLimit else { return }
            hasAnswered = true
            counter.withLockedValue { $0 += 1 }
            let bytes = context.channel.allocator.buffer(bytes: response)
            // Closed once the bytes are written: a close before would drop what is still queued.
            let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in
                boundContext.value.close(promise: nil)
            }
        }
    }
}
