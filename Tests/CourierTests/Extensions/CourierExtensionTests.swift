import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `.courier` namespace (Alamofire's `.af`) and the queue helper.
@Suite struct CourierExtensionTests {
    @Test func configurationsCarryCouriersDefaultHeaders() {
        for configuration in [URLSessionConfiguration.courier.default, URLSessionConfiguration.courier.ephemeral] {
            let headers = configuration.httpAdditionalHeaders as? [String: String]
            for header in HTTPHeaders.default {
                #expect(headers?[header.name] == header.value, "\(header.name)")
            }
        }
        #expect(URLSessionConfiguration.courier.default.urlCache == nil, "Courier's cache takes its place")
    }

    @Test func anEphemeralConfigurationWorksWithTheTransport() async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(transport: URLSessionTransport(configuration: .courier.ephemeral))
            let headers = try await session.request(server.url("/headers")).validate()
                .serializingDecodable([String: [String: String]].self).value
            #expect(headers["headers"]?["User-Agent"]?.contains("Courier/") == true)
            await session.invalidate()
        }
    }

    @Test func theNamespaceReachesTheValue() {
        let request = URLRequest(url: URL(fileURLWithPath: "/"))
        #expect(request.courier.type == request)
        #expect(Notification(name: .init("n")).courier.type.name.rawValue == "n")
    }

    @Test func afterRunsLaterAndNeverTrapsOnItsDelay() async {
        let queue = DispatchQueue(label: "test.after")
        let ran = await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                queue.after(0.01) { continuation.resume(returning: true) }
            }
        }
        #expect(ran == true)
        let ranAtOnce = await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                queue.after(.nan) { continuation.resume(returning: true) }
            }
        }
        #expect(ranAtOnce == true, "a NaN delay runs at once")
        // Scheduled a year away, and never waited for: what matters is that nothing traps.
        queue.after(.infinity) {}
        queue.after(-5) {}
    }
}
