import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite struct URLSessionTransportTests {
    /// `invalidate()` returns once URLSession has reported the session invalid, after its
    /// tasks' last delegate calls, whether it is called once, again, or twice at the same time
    /// (URLSession reports the invalidation only once).
    @Test func invalidateReturnsHoweverOftenItIsCalled() async throws {
        try await TestServer.withRunningServer { server in
            let transport = URLSessionTransport()
            let session = Session(transport: transport)
            _ = try await session.request(server.url("/get")).serializingData().value
            let together = await value(within: 30) {
                async let first: Void = transport.invalidate()
                async let second: Void = transport.invalidate()
                _ = await (first, second)
                return true
            }
            #expect(together == true, "two invalidations at once return")
            let again = await value(within: 30) {
                await transport.invalidate()
                return true
            }
            #expect(again == true, "an invalidation after the end returns")
        }
    }
}
