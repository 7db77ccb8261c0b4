import Courier
import CourierTestServer
import Foundation
import Testing

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
}
