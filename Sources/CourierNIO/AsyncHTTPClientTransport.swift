import AsyncHTTPClient
import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs requests over SwiftNIO's AsyncHTTPClient: HTTP/1.1 and HTTP/2, a connection pool, and a
/// streaming body whose reading stops while the request is suspended (real backpressure).
///
/// Lifetimes: ``shared`` uses AsyncHTTPClient's process-wide client, which is never shut down. A
/// transport made with a configuration owns its client and shuts it down in ``invalidate()``.
public final class AsyncHTTPClientTransport: Transport {
    /// The client requests run on.
    public let client: HTTPClient
    private let ownsClient: Bool
    private let isInvalidated = NIOLockedValueBox(false)

    /// A transport over AsyncHTTPClient's process-wide `HTTPClient.shared` (never shut down).
    public static let shared = AsyncHTTPClientTransport(client: HTTPClient.shared, ownsClient: false)

    /// Creates a transport that owns a new client made with `configuration`.
    ///
    /// - Parameter configuration: The client's configuration; ``defaultConfiguration()`` by default.
    public convenience init(configuration: HTTPClient.Configuration = AsyncHTTPClientTransport.defaultConfiguration()) {
        self.init(
            client: HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration),
            ownsClient: true
        )
    }

    /// Creates a transport over a client you own and shut down yourself.
    public convenience init(client: HTTPClient) {
        self.init(client: client, ownsClient: false)
    }

    private init(client: HTTPClient, ownsClient: Bool) {
        self.client = client
        self.ownsClient = ownsClient
    }

    deinit {
        // A client that is never shut down asserts in debug builds; shut it down without waiting.
        if ownsClient, !isInvalidated.withLockedValue({ $0 }) {
            client.shutdown { _ in }
        }
    }

    /// AsyncHTTPClient's defaults, plus what Courier's sessions expect: `gzip`/`deflate` bodies
    /// decoded (Courier asks for them by default), redirects followed (at most 16, as URLSession),
    /// and a refused connection reported at once rather than retried inside the pool, so that it
    /// reaches Courier's own retry policy as URLSession reports it.
    public static func defaultConfiguration() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 16, allowCycles: false),
            timeout: .init(connect: .seconds(30), read: .seconds(60)),
            decompression: .enabled(limit: .ratio(100))
        )
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// Makes a task; a file or stream `body` is read in chunks as the connection takes them.
    public func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        AsyncHTTPClientTransportTask(
            client: client,
            urlRequest: request,
            body: body,
            eventHandler: eventHandler,
            isInvalidated: isInvalidated.withLockedValue { $0 }
        )
    }

    /// Shuts down the client this transport owns; tasks made afterwards fail with
    /// `URLError(.cancelled)`. A transport over a client it does not own (``shared``, or one you
    /// passed in) stays usable: other sessions may share it, and its owner shuts it down.
    public func invalidate() async {
        guard ownsClient else { return }
        let shouldShutDown = isInvalidated.withLockedValue { invalidated -> Bool in
            defer { invalidated = true }
            return !invalidated
        }
        guard shouldShutDown else { return }
        // A response can end before AsyncHTTPClient has finished writing the request's end (a
        // streamed body the server read whole); the connection goes back to the pool in a callback
        // queued on an event loop after the request completed. Shutting down before that callback
        // runs trips a precondition in AsyncHTTPClient's pool ("a connection that we don't know was
        // released"). A task submitted to every loop runs after anything already queued there.
        for _ in 0..<2 {
            for eventLoop in client.eventLoopGroup.makeIterator() {
                try? await eventLoop.submit {}.get()
            }
        }
        try? await client.shutdown()
    }
}

extension AsyncHTTPClientTransport: _DefaultTransportProviding {
    /// ``shared``: what `Session()` runs on when this module is linked.
    public static var _defaultTransport: any Transport { shared }
}

extension Transport where Self == AsyncHTTPClientTransport {
    /// The AsyncHTTPClient transport over the process-wide shared client.
    public static var asyncHTTPClient: AsyncHTTPClientTransport { .shared }

    /// An AsyncHTTPClient transport owning a client made with `configuration`.
    public static func asyncHTTPClient(configuration: HTTPClient.Configuration) -> AsyncHTTPClientTransport {
        AsyncHTTPClientTransport(configuration: configuration)
    }
}
