import Foundation
import NIOCore
import Testing

@testable import Courier
@testable import CourierNIO

/// "No network at all" reads as `.notConnectedToInternet` on both transports, as Apple's
/// URLSession reports it, so `OfflineRetrier`'s default recognises it on Linux too.
@Suite struct OfflineErrorMappingTests {
    @Test func anUnreachableNetworkIsOfflineOverAsyncHTTPClient() {
        let error = AsyncHTTPClientTransportTask.urlError(for: IOError(errnoCode: ENETUNREACH, reason: "connect"))
        #expect(error.code == .notConnectedToInternet)
        #expect(OfflineRetrier.defaultIsOfflineError(CourierError.transportFailed(error)))
        let refused = AsyncHTTPClientTransportTask.urlError(for: IOError(errnoCode: ECONNREFUSED, reason: "connect"))
        #expect(refused.code == .cannotConnectToHost)
    }

    @Test func anUnreachableNetworkIsOfflineOverFoundationNetworking() {
        let curl = URLError(
            .cannotConnectToHost,
            userInfo: [
                NSLocalizedDescriptionKey: "Failed to connect to 10.0.0.1 port 80 after 0 ms: Network is unreachable"
            ]
        )
        let mapped = URLSessionTransportTask.codeApplesURLSessionReports(for: curl, afterResponse: false)
        #if canImport(FoundationNetworking)
        #expect(mapped == .notConnectedToInternet)
        #else
        #expect(mapped == nil)
        #endif
    }
}
