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
        let retry = CourierError.requestRetryFailed(
            retryError: URLError(.cancelled),
            originalError: URLError(.timedOut)
        )
        #expect((retry.originalError as? URLError)?.code == .timedOut)
        #expect((retry.underlyingError as? URLError)?.code == .cancelled)
        #expect(encoding.originalError == nil)
        #expect(Set([Empty.value, Empty()]).count == 1)
    }
}

extension AlamofireConvenienceTests {
    @Test(arguments: TransportKind.allCases)
    func aClosureEventMonitorSeesTheRequestsSteps(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let monitor = ClosureEventMonitor()
            let events = Protected<[String]>([])
            monitor.requestDidCreate = { _ in events.withLock { $0.append("create") } }
            monitor.requestDidReceiveResponseHead = { _, head in
                events.withLock { $0.append("head \(head.statusCode)") }
            }
            let (finished, finish) = AsyncStream<Void>.makeStream()
            monitor.requestDidParseResponse = { _, response in
                events.withLock { $0.append("parsed \((try? response.result.get()) is Data)") }
                finish.yield()
            }
            monitor.requestDidFinish = { _ in
                events.withLock { $0.append("finish") }
                finish.yield()
            }
            let session = transport.makeSession(eventMonitors: [monitor])
            _ = try await session.request(server.url("/get")).serializingData().value
            // Both the finish and the parse.
            let ended = await value(within: hangLimit) { () -> Bool in
                var count = 0
                for await _ in finished {
                    count += 1
                    if count == 2 { return true }
                }
                return false
            }
            #expect(ended == true)
            // The monitor's serial queue runs them in order; parsing may come after the finish.
            let seen = events.withLock { $0 }
            #expect(seen.prefix(2) == ["create", "head 200"])
            #expect(seen.contains("finish"))
            #expect(seen.contains("parsed true"))
            monitor.requestDidCreate = nil
            #expect(monitor.requestDidCreate == nil)
            await session.invalidate()
        }
    }
}
