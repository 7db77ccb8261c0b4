import AsyncHTTPClient
import CourierHashes
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

@testable import CourierTestServer

/// The server in TLS mode: HTTPS with `h2` or `http/1.1` by ALPN, seen by plain AsyncHTTPClient.
@Suite struct TestServerTLSTests {
    private static let tlsConfiguration = TestServer.Configuration { $0.tls = .selfSigned }

    /// A client that trusts the test certificate and nothing else; the caller shuts it down.
    private static func makeClient(
        httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestCertificate.certificatePEM.utf8)))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.httpVersion = httpVersion
        // Generous: handshakes crawl under ThreadSanitizer on a loaded machine.
        configuration.timeout = .init(connect: .seconds(30), read: .seconds(30))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// Runs `body` with a TLS server and a trusting client, shutting both down afterwards.
    private static func withServerAndClient(
        tls: TestServer.TLS = .selfSigned,
        httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
        _ body: (TestServer, HTTPClient) async throws -> Void
    ) async throws {
        let client = try makeClient(httpVersion: httpVersion)
        do {
            try await TestServer.withRunningServer(configuration: TestServer.Configuration { $0.tls = tls }) {
                try await body($0, client)
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// One request and its whole answer (30 s timeout).
    private static func fetch(
        _ client: HTTPClient,
        _ url: URL,
        method: HTTPMethod = .GET,
        body: [UInt8]? = nil
    ) async throws -> (response: HTTPClientResponse, body: [UInt8]) {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        if let body { request.body = .bytes(body) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return (response, Array(bytes.readableBytesView))
    }

    @Test func servesHTTP2OverTLSWhenBothOfferIt() async throws {
        try await Self.withServerAndClient { server, client in
            #expect(server.baseURL.absoluteString == "https://127.0.0.1:\(server.port)")
            let (response, body) = try await Self.fetch(client, server.url("/get?q=swift"))
            #expect(response.version == .http2)
            #expect(response.status == .ok)
            let echo = JSONValue.parse(body)
            #expect(echo?["url"] == .string("https://127.0.0.1:\(server.port)/get?q=swift"))
            #expect(echo?["args"] == .object(["q": .string("swift")]))
            #expect(echo?["headers"]?["Host"] == .string("127.0.0.1:\(server.port)"))
        }
    }

    @Test func servesHTTP1OverTLSWhenTheServerOffersOnlyHTTP1() async throws {
        try await Self.withServerAndClient(
            tls: TestServer.TLS(
                certificateChain: TestCertificate.certificatePEM,
                privateKey: TestCertificate.privateKeyPEM,
                offersHTTP2: false
            )
        ) { server, client in
            let (response, body) = try await Self.fetch(client, server.url("/get"))
            #expect(response.version == .http1_1)
            #expect(JSONValue.parse(body)?["url"] == .string("https://127.0.0.1:\(server.port)/get"))
        }
    }

    @Test func servesHTTP1OverTLSWhenTheClientAsksForIt() async throws {
        try await Self.withServerAndClient(httpVersion: .http1Only) { server, client in
            let (response, body) = try await Self.fetch(
                client,
                server.url("/anything/x"),
                method: .PUT,
                body: Array("{\"a\":1}".utf8)
            )
            #expect(response.version == .http1_1)
            #expect(JSONValue.parse(body)?["json"] == .object(["a": .int(1)]))
            #expect(JSONValue.parse(body)?["url"] == .string("https://127.0.0.1:\(server.port)/anything/x"))
        }
    }

    @Test func jsonRoutesAnswerOverHTTP2() async throws {
        try await Self.withServerAndClient { server, client in
            let post = try await Self.fetch(
                client,
                server.url("/post"),
                method: .POST,
                body: Array("{\"b\":[1,2]}".utf8)
            )
            #expect(post.response.version == .http2)
            #expect(JSONValue.parse(post.body)?["json"] == .object(["b": .array([.int(1), .int(2)])]))
            let teapot = try await Self.fetch(client, server.url("/status/418"))
            #expect(teapot.response.status == .imATeapot)
            let noContent = try await Self.fetch(client, server.url("/status/204"))
            #expect(noContent.response.status == .noContent)
            #expect(noContent.body.isEmpty)
            let headers = try await Self.fetch(client, server.url("/headers"))
            #expect(JSONValue.parse(headers.body)?["headers"]?["Host"] == .string("127.0.0.1:\(server.port)"))
            let head = try await Self.fetch(client, server.url("/bytes/1000"), method: .HEAD)
            #expect(head.response.headers["content-length"] == ["1000"])
            #expect(head.body.isEmpty)
            let redirect = try await Self.fetch(client, server.url("/absolute-redirect/1"))
            #expect(redirect.response.headers["location"] == ["https://127.0.0.1:\(server.port)/get"])
        }
    }

    @Test func streamedRoutesAnswerOverHTTP2() async throws {
        let path = "/stream-bytes/300000?seed=7&chunk_size=4096"
        let plain = try await TestServer.withRunningServer { try await Exchange.make($0.baseURL, path) }
        try await Self.withServerAndClient { server, client in
            let streamed = try await Self.fetch(client, server.url(path))
            #expect(streamed.response.version == .http2)
            #expect(streamed.body.count == 300_000)
            #expect(streamed.body == plain.body, "the same seeded bytes as over HTTP/1.1")
            let bytes = try await Self.fetch(client, server.url("/bytes/200000?seed=3"))
            #expect(bytes.body.count == 200_000)
            let drip = try await Self.fetch(client, server.url("/drip?numbytes=5&duration=0.2&code=201"))
            #expect(drip.response.status == .created)
            #expect(drip.body == Array("*****".utf8))
            let lines = try await Self.fetch(client, server.url("/stream/3"))
            #expect(String(decoding: lines.body, as: UTF8.self).split(separator: "\n").count == 3)
        }
    }

    @Test func requestBodiesStreamOverHTTP2() async throws {
        try await Self.withServerAndClient { server, client in
            let body = [UInt8]((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let upload = try await Self.fetch(client, server.url("/upload"), method: .POST, body: body)
            #expect(upload.response.version == .http2)
            #expect(
                JSONValue.parse(upload.body)
                    == .object(["bytes": .int(body.count), "sha256": .string(SHA256.hexDigest(of: body))])
            )
        }
    }

    @Test func manyConcurrentRequestsShareHTTP2() async throws {
        try await Self.withServerAndClient { server, client in
            let versions = try await withThrowingTaskGroup(of: (HTTPVersion, Int).self) { group in
                for index in 0..<64 {
                    group.addTask {
                        let (response, body) = try await Self.fetch(client, server.url("/anything/\(index)"))
                        let url = JSONValue.parse(body)?["url"]
                        #expect(url == .string("https://127.0.0.1:\(server.port)/anything/\(index)"))
                        return (response.version, Int(response.status.code))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(versions.count == 64)
            #expect(versions.allSatisfy { $0 == (.http2, 200) })
        }
    }

    @Test func connectionFaultsResetOnlyTheirStreamOverHTTP2() async throws {
        try await Self.withServerAndClient { server, client in
            for path in ["/fault/reset", "/fault/close", "/fault/drop/100000?after=5000", "/fault/content-length/100"] {
                await #expect(throws: (any Error).self, "\(path) fails") {
                    _ = try await Self.fetch(client, server.url(path))
                }
            }
            let after = try await Self.fetch(client, server.url("/get"))
            #expect(after.response.status == .ok)
            #expect(after.response.version == .http2)
        }
    }

    @Test func uploadFaultsEndOnlyTheirStreamOverHTTP2() async throws {
        try await Self.withServerAndClient { server, client in
            let body = [UInt8](repeating: 7, count: 1_000_000)
            // Reset after a piece; stalled (the stream's window stops opening), then closed after 1 s.
            for path in ["/fault/upload/reset?after=1000", "/fault/upload/stall?after=0&seconds=1"] {
                await #expect(throws: (any Error).self, "\(path) fails") {
                    _ = try await Self.fetch(client, server.url(path), method: .POST, body: body)
                }
            }
            let after = try await Self.fetch(client, server.url("/get"))
            #expect(after.response.status == .ok)
            #expect(after.response.version == .http2)
        }
    }

    @Test func clientsThatNeverHandshakeAreDisconnected() async throws {
        let configuration = TestServer.Configuration {
            $0.tls = .selfSigned
            $0.maximumWait = .seconds(1)  // the idle bound is then its floor, 10 s
        }
        try await TestServer.withRunningServer(configuration: configuration) { server in
            let silent = try await RawConnection.exchange(port: server.port, request: "", timeout: .seconds(60))
            #expect(silent.ending != .timedOut, "the server closed the connection itself")
            #expect(silent.bytes.isEmpty)
        }
    }

    @Test func clientsThatDoNotTrustTheCertificateAreRefused() async throws {
        try await TestServer.withRunningServer(configuration: Self.tlsConfiguration) { server in
            // Default trust roots; one attempt (the pool would otherwise retry until its connect timeout).
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.timeout.connect = .seconds(30)  // handshakes crawl under ThreadSanitizer
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let error = await #expect(throws: NIOSSLError.self) {
                _ = try await Self.fetch(client, server.url("/get"))
            }
            #expect("\(String(describing: error))".contains("CERTIFICATE_VERIFY_FAILED"))
            try await client.shutdown()
        }
    }

    @Test func unreadablePEMFailsTheStart() async throws {
        let broken = TestServer.TLS(certificateChain: "not a certificate", privateKey: TestCertificate.privateKeyPEM)
        await #expect(throws: (any Error).self) {
            try await TestServer.start(configuration: TestServer.Configuration { $0.tls = broken })
        }
    }
}
