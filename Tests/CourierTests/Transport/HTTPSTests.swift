import AsyncHTTPClient
import Courier
import CourierNIO
import CourierTestServer
import Foundation
import NIOSSL
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier over HTTPS against the test server in TLS mode: HTTP/2 and HTTP/1.1 on the
/// AsyncHTTPClient transport, and certificate verification on by default on both transports.
@Suite struct HTTPSTests {
    private struct Echo: Decodable, Sendable {
        let url: String
    }

    /// An AsyncHTTPClient transport on Courier's defaults that also trusts the test certificate.
    private static func trustingTransport(
        httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic
    ) throws -> AsyncHTTPClientTransport {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestCertificate.certificatePEM.utf8)))
        var configuration = AsyncHTTPClientTransport.defaultConfiguration()
        configuration.tlsConfiguration = tls
        configuration.httpVersion = httpVersion
        return AsyncHTTPClientTransport(configuration: configuration)
    }

    /// Gets `/get` over HTTPS and returns the protocol the metrics report.
    private static func protocolName(
        serverTLS: TestServer.TLS,
        httpVersion: HTTPClient.Configuration.HTTPVersion
    ) async throws -> String? {
        try await TestServer.withRunningServer(configuration: TestServer.Configuration { $0.tls = serverTLS }) {
            server in
            let session = Session(transport: try trustingTransport(httpVersion: httpVersion))
            let request = session.request(server.url("/get?q=courier")).validate()
            let echo = try await request.serializingDecodable(Echo.self).value
            #expect(echo.url == "https://127.0.0.1:\(server.port)/get?q=courier")
            #expect(request.response?.statusCode == 200)
            await session.invalidate()
            return request.metrics?.networkProtocolName
        }
    }

    @Test func requestsGoOverHTTP2WhenNegotiated() async throws {
        let name = try await Self.protocolName(serverTLS: .selfSigned, httpVersion: .automatic)
        #expect(name == "h2")
    }

    @Test func requestsGoOverHTTP1WhenTheServerOffersOnlyHTTP1() async throws {
        var tls = TestServer.TLS.selfSigned
        tls.offersHTTP2 = false
        let name = try await Self.protocolName(serverTLS: tls, httpVersion: .automatic)
        #expect(name == "http/1.1")
    }

    @Test func requestsGoOverHTTP1WhenTheClientAsksForIt() async throws {
        let name = try await Self.protocolName(serverTLS: .selfSigned, httpVersion: .http1Only)
        #expect(name == "http/1.1")
    }

    @Test func bodiesAndStatusesWorkOverHTTP2() async throws {
        try await TestServer.withRunningServer(configuration: TestServer.Configuration { $0.tls = .selfSigned }) {
            server in
            let session = Session(transport: try Self.trustingTransport())
            let bytes = try await session.request(server.url("/stream-bytes/100000?seed=5&chunk_size=3000"))
                .serializingData().value
            #expect(bytes.count == 100_000)
            let rejected = await failure(of: session.request(server.url("/status/503")).validate())
            #expect(rejected?.responseCode == 503)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func untrustedCertificatesAreRefusedByDefault(transport: TransportKind) async throws {
        try await TestServer.withRunningServer(configuration: TestServer.Configuration { $0.tls = .selfSigned }) {
            server in
            let session = transport.makeSession()
            let error = try #require(await failure(of: session.request(server.url("/get"))))
            #expect(error.kind == .transportFailed || error.kind == .serverTrustEvaluationFailed)
            // FoundationNetworking says `.unknown` with libcurl's message; the transport maps it.
            #expect(error.urlError?.code == .serverCertificateUntrusted, "\(error)")
            await #expect(throws: TestServerError.timedOut, "no request got through") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
            await session.invalidate()
        }
    }
}
