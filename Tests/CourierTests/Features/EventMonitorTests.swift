import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Records event names, in order, and signals when a response has been parsed.
final class RecordingMonitor: EventMonitor, @unchecked Sendable {  // @unchecked: `events` is touched on `queue` only.
    let queue = DispatchQueue(label: "test.monitor")
    private var events: [String] = []
    let parsed = AsyncStream<[String]>.makeStream()

    private func record(_ name: String) {
        events.append(name)
        if name == "parsed" { parsed.continuation.yield(events) }
    }

    func requestDidCreate(_ request: Request) { record("created") }
    func requestDidResume(_ request: Request) { record("resumed") }
    func requestDidCancel(_ request: Request) { record("cancelled") }
    func requestDidFinish(_ request: Request) { record("finished") }
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { record("urlRequest") }
    func request(_ request: Request, didFailToCreateURLRequestWithError error: CourierError) {
        record("urlRequestFailed")
    }
    func request(_ request: Request, didAdaptInitialRequest initial: URLRequest, to adapted: URLRequest) {
        record("adapted")
    }
    func request(_ request: Request, didFailToAdaptURLRequest initial: URLRequest, withError error: CourierError) {
        record("adaptationFailed")
    }
    func requestIsRetrying(_ request: Request) { record("retrying") }
    func request(_ request: Request, didStartAttemptWith urlRequest: URLRequest) { record("attemptStarted") }
    func request(_ request: Request, didReceive response: HTTPURLResponse) { record("response") }
    func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        record("attemptCompleted")
    }
    func request(_ request: Request, didValidateWithError error: CourierError?) {
        record(error == nil ? "validated" : "validationFailed")
    }
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, CourierError>)
    {
        record("parsed")
    }
}

/// Implements only the `ResponseHead` form of the response event, so nothing need build an
/// `HTTPURLResponse` for it.
final class HeadMonitor: EventMonitor {
    let queue = DispatchQueue(label: "test.headMonitor")
    let heads = AsyncStream<ResponseHead>.makeStream()

    func request(_ request: Request, didReceive head: ResponseHead) { heads.continuation.yield(head) }
}

/// Implements only the `HTTPURLResponse` form of the response event, as monitors written before
/// the head form do.
final class ResponseMonitor: EventMonitor {
    let queue = DispatchQueue(label: "test.responseMonitor")
    let responses = AsyncStream<HTTPURLResponse>.makeStream()

    func request(_ request: Request, didReceive response: HTTPURLResponse) { responses.continuation.yield(response) }
}

@Suite struct EventMonitorTests {
    @Test(arguments: TransportKind.allCases)
    func monitorsSeeEveryStepInOrder(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let first = RecordingMonitor()
            let second = RecordingMonitor()
            let session = transport.makeSession(eventMonitors: [first, second])
            _ = await session.request(server.url("/get")).validate().serializingData().result
            for monitor in [first, second] {
                var iterator = monitor.parsed.stream.makeAsyncIterator()
                let events = await iterator.next()
                #expect(
                    events == [
                        "created", "resumed", "urlRequest", "attemptStarted", "response", "attemptCompleted",
                        "validated",
                        "finished", "parsed",
                    ]
                )
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func monitorsSeeFailuresAndCancellations(transport: TransportKind) async throws {
        let monitor = RecordingMonitor()
        let session = transport.makeSession(eventMonitors: [monitor])
        _ = await session.request("not a url").serializingData().result
        var iterator = monitor.parsed.stream.makeAsyncIterator()
        #expect(await iterator.next() == ["created", "resumed", "urlRequestFailed", "finished", "parsed"])
        let cancelled = session.request("http://127.0.0.1:9/")
        #expect(cancelled.state == .initialized, "a request waits for a response handler")
        cancelled.cancel()
        _ = await cancelled.serializingData().result
        let events = await iterator.next()
        #expect(events.map { Array($0.dropFirst(5)) } == ["created", "cancelled", "finished", "parsed"])
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func aHeadMonitorGetsEveryHeadAndNothingBuildsAnHTTPURLResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let monitor = HeadMonitor()
            let session = transport.makeSession(eventMonitors: [monitor])
            let data = session.request(server.url("/get"))
            _ = try await data.validate().serializingData().value
            let download = session.download(server.url("/range/100"))
            _ = try await download.validate().serializingData().value
            let stream = session.streamRequest(server.url("/stream/2"))
            for try await _ in stream.validate().streamingData() {}
            let heads = await value(within: hangLimit) {
                await monitor.heads.stream.prefix(3).reduce(into: [ResponseHead]()) { $0.append($1) }
            }
            let expected = ([data, download, stream] as [Request]).compactMap {
                $0.responseHead.map(ObjectIdentifier.init)
            }
            #expect(heads?.map { ObjectIdentifier($0) } == expected)
            // URLSession hands over a ready HTTPURLResponse; over AsyncHTTPClient nothing built one.
            #expect(heads?.allSatisfy { $0.hasHTTPURLResponse == (transport == .urlSession) } == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aMonitorOfTheHTTPURLResponseFormStillGetsEveryResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let monitor = ResponseMonitor()
            let session = transport.makeSession(eventMonitors: [monitor])
            _ = try await session.request(server.url("/get")).validate().serializingData().value
            _ = try await session.download(server.url("/range/100")).validate().serializingData().value
            for try await _ in session.streamRequest(server.url("/stream/2")).validate().streamingData() {}
            let responses = await value(within: hangLimit) {
                await monitor.responses.stream.prefix(3).reduce(into: [HTTPURLResponse]()) { $0.append($1) }
            }
            #expect(responses?.map(\.statusCode) == [200, 200, 200])
            #expect(responses?.map { $0.url?.path } == ["/get", "/range/100", "/stream/2"])
            await session.invalidate()
        }
    }
}
