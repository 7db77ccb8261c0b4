import CourierTestServer
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Retry-After` values a server chooses; the ordinary forms are covered in `RetryPolicyTests`.
@Suite struct RetryAfterTests {
    /// Found by `Fuzz/Sources/FuzzRetryAfter`: FoundationNetworking's `DateFormatter` traps when a
    /// character spans the end of what it parsed, as a combining mark after a date does.
    static let dateWithCombiningMark = "Sun, 06 Nov 1994 08:49:37 GMT\u{05B1}"

    @Test func textThatIsNotPrintableASCIIIsNoDateAndNoCrash() {
        let now = Date(timeIntervalSince1970: 0)
        for value in [Self.dateWithCombiningMark, "Su 06\u{05B1}", "Sun, 06\u{05B1} Nov 1994 08:49:37 GMT"] {
            #expect(RetryAfter.date(from: value) == nil)
            #expect(RetryAfter.delay(from: value, now: now) == nil)
        }
        #expect(RetryAfter.date(from: "Sun, 06 Nov 1994 08:49:37 GMT\u{7F}") == nil)
        #expect(RetryAfter.date(from: "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " ", count: 64)) == nil)
        #expect(RetryAfter.date(from: "Wednesday, 09-Nov-94 08:49:37 GMT") != nil, "the longest form still reads")
    }

    @Test(arguments: TransportKind.allCases)
    func aServersUnreadableRetryAfterIsIgnored(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // `/response-headers` answers 200 with the header asked for; the policy treats 200 as
            // retryable, and validation fails it, so the policy reads `Retry-After`.
            let policy = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01, retryableHTTPStatusCodes: [200])
            let session = transport.makeSession(interceptor: policy)
            var components = try #require(
                URLComponents(url: server.url("/response-headers"), resolvingAgainstBaseURL: false)
            )
            components.queryItems = [URLQueryItem(name: "Retry-After", value: Self.dateWithCombiningMark)]
            let request = session.request(try #require(components.url)).validate(statusCode: [204])
            let error = await request.serializingData().result.failure
            #expect(error?.responseCode == 200)
            #expect(request.retryCount == 1, "retried after the policy's own backoff")
            await session.invalidate()
        }
    }
}
