import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The small Alamofire names: metrics shortcuts, a task's resume, stream event accessors,
/// `HTTPURLResponse.headers`, `CourierError`'s detail properties.
@Suite struct AlamofireConvenienceTests {
    @Test(arguments: TransportKind.allCases)
    func tasksResumeAndRequestsKeepTheirMetrics(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.startRequestsImmediately = false }
            let request = session.request(server.url("/response-headers?X-Name=ada"))
            let task = request.serializingData()
            #expect(request.state == .initialized)
            task.resume()
            let response = await value(within: hangLimit) { await task.response }
            #expect(response?.error == nil)
            #expect(request.firstMetrics?.statusCode == 200)
            #expect(request.lastMetrics?.statusCode == 200)
            #expect(response?.response?.headers.value(for: "x-name") == "ada")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamEventsHaveAlamofiresAccessors(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let (values, completions) = await withCheckedContinuation { continuation in
                let values = Protected<[Data]>([])
                session.streamRequest(server.url("/bytes/10")).responseStream { stream in
                    #expect(stream.error == nil)
                    if let value = stream.value { values.withLock { $0.append(value) } }
                    if let completion = stream.completion {
                        #expect(stream.result == nil)
                        continuation.resume(returning: (values.withLock { $0 }, completion))
                    }
                }
            }
            #expect(values.reduce(0) { $0 + $1.count } == 10)
            #expect(completions.error == nil)
            await session.invalidate()
        }
    }

    @Test func errorsExposeTheirDetailsByAlamofiresNames() {
        let contentType = CourierError.responseValidationFailed(
            .unacceptableContentType(acceptableContentTypes: ["application/json"], responseContentType: "text/html")
        )
        #expect(contentType.acceptableContentTypes == ["application/json"])
        #expect(contentType.responseContentType == "text/html")
        let encoding = CourierError.responseSerializationFailed(.stringSerializationFailed(encoding: .utf8))
        #expect(encoding.failedStringEncoding == .utf8)
        #expect(encoding.acceptableContentTypes == nil)
        #expect(CourierError.invalidURL("http://exa mple").url == "http://exa mple")
        #expect(Set([Empty.value, Empty()]).count == 1)
    }
}
