import AsyncHTTPClient
import Courier
import CourierNIO
import CourierTestServer
import Foundation
import Testing

@Suite struct AsyncHTTPClientTransportTests {
    /// AsyncHTTPClient fails a redirect past its limit without calling the delegate; the attempt
    /// must still end, with the error URLSession gives for it.
    @Test(arguments: [0, 1])
    func redirectPastTheLimitFailsTheRequest(maximumRedirects: Int) async throws {
        try await TestServer.withRunningServer { server in
            var configuration = AsyncHTTPClientTransport.defaultConfiguration()
            configuration.redirectConfiguration = .follow(max: maximumRedirects, allowCycles: false)
            let session = Session(transport: AsyncHTTPClientTransport(configuration: configuration))
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
}
