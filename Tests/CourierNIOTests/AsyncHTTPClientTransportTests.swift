import AsyncHTTPClient
import Courier
import CourierNIO
import CourierTestServer
import CourierTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

@Suite struct AsyncHTTPClientTransportTests {
    /// The transport follows no redirect (Courier's request does, the same way on every
    /// transport): a 302 is reported as it is, with its own URL.
    @Test func aRedirectIsReportedAsItIs() async throws {
        try await TestServer.withRunningServer { server in
            let transport = AsyncHTTPClientTransport()
            let (recorder, _) = LoopRecorder.send(to: server.url("/redirect/1"), over: transport)
            let completed = await value(within: hangLimit) { await recorder.headLoop() }
            #expect(completed != nil, "the attempt never ended")
            #expect(recorder.head?.statusCode == 302)
            #expect(recorder.head?.url?.path == "/redirect/1")
            await transport.invalidate()
        }
    }

    /// A proxy that answers AsyncHTTPClient's `CONNECT` with `407` fails the request with a
    /// clear error that says where proxy credentials go (the request never sees the challenge).
    @Test func aProxyThatWantsCredentialsFailsClearly() async throws {
        try await TestServer.withRunningServer { server in
            var configuration = AsyncHTTPClientTransport.defaultConfiguration()
            configuration.proxy = .server(host: "127.0.0.1", port: server.port)
            let transport = AsyncHTTPClientTransport.asyncHTTPClient(configuration: configuration)
            let session = Session(transport: transport)
            let result = await value(within: hangLimit) {
                await session.request(server.url("/get")).serializingData().result
            }
            guard case .failure(let error)? = result else {
                Issue.record("expected the proxy to refuse, got \(String(describing: result))")
                return
            }
            #expect(error.urlError?.code == .userAuthenticationRequired)
            #expect(error.localizedDescription.contains("Proxy.server(host:port:authorization:)"))
            await session.invalidate()
        }
    }

    /// `Session()`'s default transport is Courier's own client: a refused connection fails at once
    /// rather than being retried inside AsyncHTTPClient's pool until the timeout.
    @Test func theSharedTransportReportsARefusedConnectionAtOnce() async throws {
        let session = Session(transport: AsyncHTTPClientTransport.shared)
        let closed = try ClosedPort()
        let port = closed.port
        for _ in 0..<2 {
            let request = session.request("http://127.0.0.1:\(port)/")
            let result = await value(within: hangLimit) { await request.serializingData().result }
            guard case .failure(let error)? = result else {
                // Where it stood, if it hung (a 20 s bound was overrun at a full run's start, see `hangLimit`).
                let progress: String =
                    "state \(request.state), sent \(request.performedRequests.count), "
                    + "metrics \(request.allMetrics.count)"
                Issue.record("expected a prompt failure, got \(String(describing: result)); \(progress)")
                return
            }
            #expect(error.urlError?.code == .cannotConnectToHost)
        }
    }

    /// A request sent while none other of the transport's is in flight prefers the transport's
    /// home loop, where its connection then is: a client sending one request at a time gets
    /// every request's events on one loop, with no hop between loops. While another request is
    /// in flight, requests are spread over the group's loops again.
    @Test func requestsSentOneAtATimeStayOnOneLoopAndConcurrentOnesSpread() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let client = HTTPClient(eventLoopGroup: group, configuration: AsyncHTTPClientTransport.defaultConfiguration())
        let transport = AsyncHTTPClientTransport(client: client)
        try await TestServer.withRunningServer { server in
            var alone: Set<ObjectIdentifier> = []
            for _ in 0..<8 {
                let (recorder, _) = LoopRecorder.send(to: server.url("/get"), over: transport)
                alone.insert(try #require(await recorder.headLoop()))
            }
            #expect(alone.count == 1, "one request at a time: one loop")

            let (held, heldTask) = LoopRecorder.send(to: server.url("/fault/hang?seconds=30"), over: transport)
            try await server.waitForRequests(9, timeout: .seconds(30))
            var beside: Set<ObjectIdentifier> = []
            for _ in 0..<8 {
                let (recorder, _) = LoopRecorder.send(to: server.url("/get"), over: transport)
                beside.insert(try #require(await recorder.headLoop()))
            }
            #expect(beside.count == 2, "beside a request in flight: both loops")
            heldTask.cancel()
            #expect(await held.headLoop() == nil)
        }
        try await client.shutdown()
        try await group.shutdownGracefully()
    }

    /// A transport that makes its client counts the pool's connections per loop and sends each
    /// request to the loop where an idle one most likely waits. With as many requests in flight
    /// as the pool has connections, about one request in five left to AsyncHTTPClient's choice
    /// finds no idle connection on its loop, takes one on the other, and its events hop; steered,
    /// nearly none does.
    @Test func requestsGoToTheLoopWhereAConnectionIsIdle() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let connections = ConnectionLoops()
        var configuration = AsyncHTTPClientTransport.defaultConfiguration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 4
        configuration.http1_1ConnectionDebugInitializer = { channel in
            channel.pipeline.addHandler(RequestIDReader(connections: connections), position: .first)
        }
        let transport = AsyncHTTPClientTransport(configuration: configuration, eventLoopGroup: group)
        let workers = 4
        let rounds = 50
        try await TestServer.withRunningServer { server in
            let requests = try await withThrowingTaskGroup(of: [(Int, ObjectIdentifier?)].self) { tasks in
                for worker in 0..<workers {
                    tasks.addTask {
                        var seen: [(Int, ObjectIdentifier?)] = []
                        for round in 0..<rounds {
                            let id = worker * 1_000 + round
                            let (recorder, _) = LoopRecorder.send(to: server.url("/get"), over: transport, id: id)
                            seen.append((id, await recorder.headLoop()))
                        }
                        return seen
                    }
                }
                return try await tasks.reduce(into: []) { $0 += $1 }
            }
            #expect(requests.count == workers * rounds)
            #expect(requests.allSatisfy { $0.1 != nil }, "every request got its response")
            let hopped = requests.filter { id, headLoop in headLoop == nil || headLoop != connections.loop(of: id) }
            #expect(hopped.count <= requests.count / 10, "\(hopped.count) of \(requests.count) requests hopped")
        }
        await transport.invalidate()
        try await group.shutdownGracefully()
    }
}

/// Which connection's loop each request went out on, by the `x-request-id` it was sent with.
private final class ConnectionLoops: Sendable {
    private let loops = TestLock([Int: ObjectIdentifier]())

    func record(_ id: Int, on eventLoop: any EventLoop) {
        loops.withLock { $0[id] = ObjectIdentifier(eventLoop as AnyObject) }
    }

    func loop(of id: Int) -> ObjectIdentifier? { loops.withLock { $0[id] } }
}

/// Reads the `x-request-id` of each request head a connection writes, next to the socket.
private final class RequestIDReader: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    let connections: ConnectionLoops

    init(connections: ConnectionLoops) { self.connections = connections }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .byteBuffer(let buffer) = unwrapOutboundIn(data),
            let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes),
            let line = text.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("x-request-id:") }),
            let id = Int(line.dropFirst("x-request-id:".count).trimmingCharacters(in: .whitespaces))
        {
            connections.record(id, on: context.eventLoop)
        }
        context.write(data, promise: promise)
    }
}

/// Sends one GET straight over a transport and records the event loop its response head arrived
/// on; an `id` goes out as `x-request-id`.
private final class LoopRecorder: TransportEventHandler, Sendable {
    private struct State {
        var loop: ObjectIdentifier?
        var head: ResponseHead?
        var isComplete = false
        var waiter: CheckedContinuation<ObjectIdentifier?, Never>?
    }

    private let state = TestLock(State())

    /// Sends a GET to `url` over `transport`; the recorder receives its events.
    static func send(
        to url: URL,
        over transport: AsyncHTTPClientTransport,
        id: Int? = nil
    ) -> (LoopRecorder, any TransportTask) {
        let recorder = LoopRecorder()
        var headers = Courier.HTTPHeaders()
        if let id { headers.add(name: "x-request-id", value: String(id)) }
        let head = RequestHead(method: .get, url: url, headers: headers)
        let task = transport.makeTask(for: head, body: nil, eventHandler: recorder)
        task.resume()
        return (recorder, task)
    }

    func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse) {}

    func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {
        let loop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0 as AnyObject) }
        state.withLock { state in
            state.loop = loop
            state.head = head
        }
    }

    /// The response head, once it has arrived.
    var head: ResponseHead? { state.withLock { $0.head } }

    func transportTask(_ task: any TransportTask, didReceive data: Data) {}

    func transportTask(_ task: any TransportTask, didSendBodyBytes totalBytesSent: Int64, of totalBytesExpected: Int64?)
    {}

    func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics) {
        let (waiter, loop) = state.withLock { state in
            state.isComplete = true
            defer { state.waiter = nil }
            return (state.waiter, state.loop)
        }
        waiter?.resume(returning: loop)
    }

    /// Once the request has completed: the loop its head arrived on, or `nil` if none arrived.
    func headLoop() async -> ObjectIdentifier? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> ObjectIdentifier?? in
                guard state.isComplete else {
                    state.waiter = continuation
                    return nil
                }
                return .some(state.loop)
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
