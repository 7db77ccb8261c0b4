import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `RetryPolicy.shouldRetry`: the status or the transport's error may each call for a retry, as
/// in Alamofire.
@Suite struct RetryPolicyDecisionTests {
    /// The failed request and its error, after `script` played.
    private static func failure(_ script: StubResponse) async throws -> (DataRequest, CourierError) {
        let session = Session(transport: StubTransport([script]))
        let request = session.request("https://example.com/items")
        let response = await value(within: hangLimit) { await request.serializingData().response }
        let error = try #require(response?.error, "the request did not fail")
        await session.invalidate()
        return (request, error)
    }

    @Test func aRetryableStatusIsRetriedWhateverTheTransportsError() async throws {
        let (request, error) = try await Self.failure(
            StubResponse.status(503).fail(with: URLError(.cannotDecodeContentData))
        )
        #expect(error.urlError?.code == .cannotDecodeContentData)
        #expect(RetryPolicy().shouldRetry(request, dueTo: error))
    }

    @Test func aRetryableErrorIsRetriedWhateverTheStatus() async throws {
        let (request, error) = try await Self.failure(StubResponse.status(200).fail(with: URLError(.timedOut)))
        #expect(RetryPolicy().shouldRetry(request, dueTo: error))
    }

    @Test func neitherMeansNoRetry() async throws {
        let (request, error) = try await Self.failure(
            StubResponse.status(200).fail(with: URLError(.cannotDecodeContentData))
        )
        #expect(!RetryPolicy().shouldRetry(request, dueTo: error))
        // Alamofire's set: resourceUnavailable is not in it, certificate date errors are.
        #expect(!RetryPolicy.defaultRetryableURLErrorCodes.contains(.resourceUnavailable))
        #expect(RetryPolicy.defaultRetryableURLErrorCodes.contains(.serverCertificateHasBadDate))
    }
}
