import AsyncHTTPClient
import Courier
import CourierNIO
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite struct AsyncHTTPClientTransportTests {
    /// Courier follows redirects itself on this transport; past its limit the attempt ends with
    /// the error URLSession gives for it.
    @Test(arguments: [1, 2])
    func redirectPastTheLimitFailsTheRequest(maximumRedirects: Int) async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(transport: AsyncHTTPClientTransport(maximumRedirects: maximumRedirects))
            // A hang detector: generous, since a loaded machine can be slow, and a hang never ends.
            let result = await value(within: 30) {
                await session.request(server.url("/redirect/3")).serializingData().result
            }
            let outcome = try #require(result, "the request never ended")
            guard case .failure(let error) = outcome else {
                Issue.record("expected a failure, got \(outcome)")
                await session.invalidate()
                return
            }
            #expect(error.urlError?.code == .httpTooManyRedirects)
            await session.invalidate()
        }
    }

    /// With no redirects to follow, a redirect is the response.
    @Test func withRedirectsOffARedirectIsTheResponse() async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(transport: AsyncHTTPClientTransport(maximumRedirects: 0))
            let response = await session.request(server.url("/redirect/1")).serializingData().response
            #expect(response.error == nil)
            #expect(response.head?.statusCode == 302)
            #expect(response.head?.value(forHTTPHeaderField: "Location") != nil)
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
            let result = await value(within: 20) {
                await session.request("http://127.0.0.1:\(port)/").serializingData().result
            }
            guard case .failure(let error)? = result else {
                Issue.record("expected a prompt failure, got \(String(describing: result))")
                return
            }
            #expect(error.urlError?.code == .cannotConnectToHost)
        }
    }
}
