import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's events for uploads, downloads and stream serializers, through `ClosureEventMonitor`.
@Suite struct AlamofireEventTests {
    /// A monitor that reports each event it gets as a line on a stream.
    private func makeMonitor() -> (ClosureEventMonitor, AsyncStream<String>) {
        let (events, continuation) = AsyncStream<String>.makeStream()
        let monitor = ClosureEventMonitor()
        monitor.requestDidCreateUploadable = { _, body in continuation.yield("uploadable \(body.length ?? -1)") }
        monitor.requestDidFailToCreateUploadable = { _, error in continuation.yield("uploadable failed \(error.kind)") }
        monitor.requestDidCreateDestinationURL = { _, url in continuation.yield("destination \(url.lastPathComponent)")
        }
        monitor.requestDidFinishDownloading = { _, result in
            continuation.yield("downloaded \((try? result.get())?.lastPathComponent ?? "failed")")
        }
        monitor.requestDidParseDownloadResponse = { _, response in
            continuation.yield("parsed download \(response.result.failure == nil)")
        }
        monitor.requestDidParseStream = { _, result in continuation.yield("parsed stream \(result.failure == nil)") }
        return (monitor, events)
    }

    /// The next `count` events, or `nil` if they do not all come in time.
    private func next(_ count: Int, of events: AsyncStream<String>) async -> [String]? {
        await value(within: hangLimit) {
            var seen: [String] = []
            for await event in events {
                seen.append(event)
                if seen.count == count { break }
            }
            return seen
        }
    }

    @Test(arguments: TransportKind.allCases)
    func uploadsReportTheirBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (monitor, events) = makeMonitor()
            let session = transport.makeSession(eventMonitors: [monitor])
            _ = try await session.upload(Data(count: 1_000), to: server.url("/upload?hash=false"))
                .validate().serializingData().value
            #expect(await next(1, of: events) == ["uploadable 1000"])

            let missing = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            let failure = await session.upload(missing, to: server.url("/upload")).serializingData().result.failure
            #expect(failure?.kind == .createUploadableFailed)
            #expect(await next(1, of: events) == ["uploadable failed createUploadableFailed"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadsReportTheirFileAndResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (monitor, events) = makeMonitor()
            let session = transport.makeSession(eventMonitors: [monitor])
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: folder) }
            let target = folder.appendingPathComponent("bytes.bin")
            let url = try await session.download(
                server.url("/bytes/100"),
                to: { _, _ in (target, [.createIntermediateDirectories]) }
            ).validate().serializingDownloadedFileURL().value
            #expect(url == target)
            #expect(
                await next(3, of: events) == ["destination bytes.bin", "downloaded bytes.bin", "parsed download true"]
            )
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamSerializersReportEachValue(transport: TransportKind) async throws {
        struct Line: Decodable, Sendable {
            var id: Int
        }
        try await TestServer.withRunningServer { server in
            let (monitor, events) = makeMonitor()
            let session = transport.makeSession(eventMonitors: [monitor])
            let done: Void? = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    session.streamRequest(server.url("/stream/3")).responseStreamDecodable(of: Line.self) { stream in
                        if case .complete = stream.event { continuation.resume() }
                    }
                }
            }
            #expect(done != nil)
            #expect(await next(3, of: events) == Array(repeating: "parsed stream true", count: 3))
            await session.invalidate()
        }
    }
}
