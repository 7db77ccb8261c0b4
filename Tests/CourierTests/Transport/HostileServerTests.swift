import Courier
import CourierNIO
import CourierTestServer
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a server can send that a client must survive: URLs SwiftNIO traps on, responses that are
/// not valid HTTP, bodies that inflate past any memory. Each runs on both transports, and each
/// answer is the same on both.
@Suite struct HostileServerTests {
    @Test(
        arguments: TransportKind.allCases,
        [
            "http://127.0.0.1:65536/", "http://[::1]:70000/", "http://127.0.0.1:99999999999999999999/",
            "ftp://127.0.0.1/", "http:///path",
        ]
    )
    func aURLCourierCannotSendFailsWithInvalidURL(transport: TransportKind, url: String) async throws {
        let session = transport.makeSession()
        let error = await failure(of: session.request(url))
        #expect(error?.kind == .invalidURL)
        // Foundation cannot parse the last one at all; the others parse, and Courier says why not.
        #expect((error?.invalidURLReason != nil) == (url != "http:///path"))
        await session.invalidate()
    }

    /// A redirect to a port above 65535 killed the process (SIGILL in SwiftNIO) over AsyncHTTPClient,
    /// which followed it on its event loop without Courier seeing the `Location`.
    @Test(
        arguments: TransportKind.allCases,
        ["http://127.0.0.1:65536/get", "http://[::1]:70000/", "http://h:123456/", "http://%5B%5D/"]
    )
    func aRedirectToAPortAbove65535FailsWithInvalidURL(transport: TransportKind, location: String) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var components = URLComponents(url: server.url("/redirect-to"), resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: "url", value: location)]
            let url = try #require(components?.url)
            let error = await failure(of: session.request(url))
            #expect(error?.kind == .invalidURL)
            #expect(error?.invalidURLReason?.contains("redirected") == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func credentialsInTheURLNeverReachAnInvalidURLError(transport: TransportKind) async throws {
        let session = transport.makeSession()
        let error = await failure(of: session.request("http://user:hunter2@127.0.0.1:70000/"))
        #expect(error?.kind == .invalidURL)
        #expect(error.map { "\($0)".contains("hunter2") } == false)
        #expect(error?.invalidURLString?.contains("hunter2") == false)
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func redirectsAreStillFollowedUpToTheLimit(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let followed = await session.request(server.url("/redirect/3")).serializingData().response
            #expect(followed.head?.statusCode == 200)
            #expect(followed.head?.url?.path == "/get")
            let error = await failure(of: session.request(server.url("/redirect/20")))
            #expect(error?.urlError?.code == .httpTooManyRedirects)
            await session.invalidate()
        }
    }

    /// A method-changing redirect drops the body and the headers that describe it.
    @Test(arguments: TransportKind.allCases)
    func a303TurnsAPostIntoAGetWithoutItsBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let echo = try await session.request(
                server.url("/redirect-to?url=/anything&status_code=303"),
                method: .post
            ) {
                $0.httpBody = Data("name=courier".utf8)
                $0.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
            .serializingDecodable([String: JSONScalar].self).value
            #expect(echo["method"] == .string("GET"))
            #expect(echo["data"] == .string(""))
            await session.invalidate()
        }
    }

    // MARK: - Responses that are not valid HTTP

    /// The error a request to a server answering `response` fails with, with a retry policy in
    /// place, and how many attempts the server saw.
    private func outcome(
        answering response: String,
        on transport: TransportKind
    ) async throws -> (error: CourierError?, attempts: Int) {
        try await RawResponseServer.withRunningServer(response: response) { server in
            let session = transport.makeSession(interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01))
            let error = await failure(of: session.request(server.url("/")))
            await session.invalidate()
            return (error, server.answeredRequests)
        }
    }

    @Test(
        arguments: TransportKind.allCases,
        [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        ]
    )
    func conflictingFramingIsAnInvalidResponseThatIsNotRetried(transport: TransportKind, response: String) async throws
    {
        let (error, attempts) = try await outcome(answering: response, on: transport)
        #expect(error?.kind == .invalidResponse, "\(String(describing: error))")
        #expect(attempts == 1, "a protocol violation is not retried")
    }

    @Test(arguments: TransportKind.allCases)
    func aLatin1ByteInAHeaderValueIsAccepted(transport: TransportKind) async throws {
        var bytes = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Name: caf".utf8)
        bytes += [0xE9]
        bytes += Array("\r\nConnection: close\r\n\r\nok".utf8)
        try await RawResponseServer.withRunningServer(response: bytes) { server in
            let session = transport.makeSession()
            let response = await session.request(server.url("/")).serializingData().response
            // FoundationNetworking decodes every header line as UTF-8 and aborts the transfer
            // ("Failed writing header") on one that is not; Apple's URLSession and SwiftNIO take it.
            withKnownIssue("FoundationNetworking aborts on a header that is not UTF-8") {
                #expect(response.error == nil, "\(String(describing: response.error))")
                #expect(response.data == Data("ok".utf8))
                #expect(response.head?.value(forHTTPHeaderField: "X-Name")?.hasPrefix("caf") == true)
            } when: {
                #if canImport(FoundationNetworking)
                transport == .urlSession
                #else
                false
                #endif
            }
            await session.invalidate()
        }
    }

    // MARK: - Bodies

    /// A 16 KiB gzip body that inflates to 16 MiB fails at a 4 MiB in-memory limit, counted
    /// after decompression, on both transports. (The default is 64 MiB; a bomb past it would
    /// only make the test slower.)
    @Test(arguments: TransportKind.allCases)
    func aGzipBombStopsAtTheResponseBodyLimit(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.maximumResponseBodySize = 4 << 20 }
            let error = await failure(of: session.request(server.url("/fault/gzip-bomb/16")))
            #expect(error?.kind == .bodyTooLarge, "\(String(describing: error))")
            #expect(Session.Configuration().maximumResponseBodySize == 64 << 20, "bounded by default")
            await session.invalidate()
        }
    }

    /// A body that compresses 1000:1 is ordinary (AsyncHTTPClient's ratio limit of 100 refused it).
    @Test(arguments: TransportKind.allCases)
    func aHighlyCompressedBodyUnderTheLimitArrivesWhole(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let data = try await session.request(server.url("/fault/gzip-bomb/2")).serializingData().value
            #expect(data.count == 2 << 20)
            #expect(data.allSatisfy { $0 == 0 })
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theResponseBodyLimitCanBeRaisedOrLifted(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.maximumResponseBodySize = 1024 }
            let error = await failure(of: session.request(server.url("/bytes/2048")))
            #expect(error?.kind == .bodyTooLarge)
            #expect(error.map { "\($0)".contains("maximumResponseBodySize") } == true)
            let unlimited = transport.makeSession { $0.maximumResponseBodySize = nil }
            let data = try await unlimited.request(server.url("/bytes/2048")).serializingData().value
            #expect(data.count == 2048)
            await session.invalidate()
            await unlimited.invalidate()
        }
    }

    /// A suspended request whose transfer cannot be paused (URLSession on Linux) holds what
    /// arrives in memory up to a limit, then fails rather than growing without end.
    @Test(.enabled(if: !URLSessionTransport.pausesTransfers))
    func bytesHeldForASuspendedRequestAreBounded() async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(transport: URLSessionTransport(maximumHeldBytes: 64 * 1024))
            let request = session.request(server.url("/range/8388608"))
            let suspended = Mutex(false)
            request.downloadProgress { [request] progress in
                guard progress.completedUnitCount > 0 else { return }
                let isFirst = suspended.withLock { wasSuspended in
                    defer { wasSuspended = true }
                    return !wasSuspended
                }
                if isFirst { request.suspend() }
            }
            let error = await failure(of: request)
            #expect(error?.kind == .bufferLimitExceeded, "\(String(describing: error))")
            #expect(request.isSuspended || request.isFinished)
            await session.invalidate()
        }
    }

    // MARK: - Time

    /// A head trickled out over 4 s, a byte at a time, is no event until it is whole: a 1.5 s
    /// idle timeout ends the attempt on both transports (libcurl's byte clock never would).
    @Test(arguments: TransportKind.allCases)
    func aTrickledHeadTimesOutAlike(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.timeoutInterval = 1.5 }
            let error = await failure(of: session.request(server.url("/fault/slow-headers?seconds=4")))
            #expect(error?.urlError?.code == .timedOut, "\(String(describing: error))")
            await session.invalidate()
        }
    }

    // MARK: - TLS

    /// TLS spoken to a plain HTTP port is a failed handshake, not an untrusted certificate.
    @Test(arguments: TransportKind.allCases)
    func tlsToAPlainPortIsASecureConnectionFailure(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let plain = server.url("/get").absoluteString
            let error = await failure(of: session.request("https" + plain.dropFirst("http".count)))
            #expect(error?.urlError?.code == .secureConnectionFailed, "\(String(describing: error))")
            await session.invalidate()
        }
    }
}
