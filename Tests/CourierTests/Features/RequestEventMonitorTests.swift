import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Puts each event it hears, with the request's id, in a mailbox.
private final class MailboxMonitor: EventMonitor {
    let queue = DispatchQueue(label: "test.mailboxMonitor")
    let events = Mailbox<(id: UUID, name: String)>()

    func requestDidResume(_ request: Request) { events.put((request.id, "resumed")) }
    func requestDidFinish(_ request: Request) { events.put((request.id, "finished")) }
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        events.put((request.id, "urlRequest"))
    }
    func request(_ request: Request, didReceive head: ResponseHead) { events.put((request.id, "response")) }
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, CourierError>)
    {
        events.put((request.id, "parsed"))
    }
    func request(_ request: DownloadRequest, didFinishDownloadingWith result: Result<URL, CourierError>) {
        events.put((request.id, "downloaded"))
    }
    func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, CourierError>) {
        events.put((request.id, "streamed"))
    }

    /// The names heard, once `count` events have arrived; `nil` after the hang limit.
    func names(count: Int) async -> [String]? {
        guard await events.value(at: count - 1) != nil else { return nil }
        return events.values.map(\.name)
    }
}

/// Alamofire 5.11's `Request.eventMonitor(_:)`: a monitor of one request, on both transports.
@Suite struct RequestEventMonitorTests {
    @Test(arguments: TransportKind.allCases)
    func aRequestsMonitorHearsItsEventsAfterTheSessions(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let sessionMonitor = MailboxMonitor()
            let session = transport.makeSession(eventMonitors: [sessionMonitor])
            let own = MailboxMonitor()
            let watched = session.request(server.url("/get")).eventMonitor(own)
            let other = session.request(server.url("/get"))
            _ = await watched.serializingData().result
            _ = await other.serializingData().result
            let expected = ["resumed", "urlRequest", "response", "finished", "parsed"]
            #expect(await own.names(count: expected.count) == expected)
            #expect(own.events.values.allSatisfy { $0.id == watched.id }, "only the request's own events")
            // The session's monitor hears both requests, its own monitors unchanged.
            #expect(await sessionMonitor.names(count: 2 * expected.count)?.count == 2 * expected.count)
            #expect(Set(sessionMonitor.events.values.map(\.id)) == [watched.id, other.id])
            #expect((session.eventMonitor.monitors.first as? MailboxMonitor) === sessionMonitor)
            #expect(session.eventMonitor.monitors.count == 1)
            #expect((watched.eventMonitor as? CompositeEventMonitor)?.monitors.count == 2)
            #expect((other.eventMonitor as? CompositeEventMonitor)?.monitors.count == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSessionWithoutMonitorsStillTellsARequestsOwn(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let first = MailboxMonitor()
            let second = MailboxMonitor()
            let request = session.request(server.url("/get")).eventMonitor(first).eventMonitor(second)
            _ = await request.validate().serializingData().result
            let expected = ["resumed", "urlRequest", "response", "finished", "parsed"]
            #expect(await first.names(count: expected.count) == expected)
            #expect(await second.names(count: expected.count) == expected)
            #expect(session.eventMonitor.monitors.isEmpty)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadsAndStreamsTellTheirMonitors(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let downloadMonitor = MailboxMonitor()
            let download = session.download(server.url("/bytes/1000")).eventMonitor(downloadMonitor)
            _ = try await download.serializingDownloadedFileURL().value
            #expect(await downloadMonitor.names(count: 5)?.contains("downloaded") == true)

            let streamMonitor = MailboxMonitor()
            let stream = session.streamRequest(server.url("/stream/2")).eventMonitor(streamMonitor)
            for try await _ in stream.streamingStrings() {}
            let names = await streamMonitor.names(count: 4)
            #expect(names?.prefix(3) == ["resumed", "urlRequest", "response"], "\(names ?? [])")
            if let file = download.fileURL { try? FileManager.default.removeItem(at: file) }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aMonitorAddedLateHearsWhatHappensFromThen(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/get"))
            _ = await request.serializingData().result
            let late = MailboxMonitor()
            request.eventMonitor(late)
            let parsed = await value(within: hangLimit) {
                await withCheckedContinuation { continuation in
                    request.responseString { continuation.resume(returning: $0.value) }
                }
            }
            #expect(parsed != nil)
            #expect(await late.names(count: 1) == ["parsed"], "only the parse of a handler added after it")
            #expect(late.events.count == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRepeatKeepsTheAddedMonitors(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let monitor = MailboxMonitor()
            let original = session.request(server.url("/get")).eventMonitor(monitor)
            let again = original.repeated()
            _ = await again.serializingData().result
            #expect(await monitor.names(count: 5) == ["resumed", "urlRequest", "response", "finished", "parsed"])
            #expect(monitor.events.values.allSatisfy { $0.id == again.id })
            original.cancel()
            await session.invalidate()
        }
    }
}
