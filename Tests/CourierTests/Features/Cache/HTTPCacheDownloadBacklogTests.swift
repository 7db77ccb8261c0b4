import CourierNIO
import CourierTestServer
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Opens a download's stopped file queue once more than `threshold` body bytes have arrived.
private final class ArrivalGate: EventMonitor, @unchecked Sendable {
    // @unchecked Sendable: `semaphore` is thread-safe, and `isOpen` sits in a Mutex.
    let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Mutex(false)
    let threshold: Int64

    init(threshold: Int64) {
        self.threshold = threshold
    }

    var receivesBodyPieces: Bool { true }

    func request(_ request: Request, didReceiveBodyPieceOf byteCount: Int) {
        guard let download = request as? DownloadRequest,
            download.downloadProgress.completedUnitCount > threshold
        else { return }
        open()
    }

    func open() {
        let wasOpen = isOpen.withLock { isOpen in
            defer { isOpen = true }
            return isOpen
        }
        if !wasOpen { semaphore.signal() }
    }
}

// A stalled download fails here instead of hanging the suite.
@Suite(.timeLimit(.minutes(1))) struct HTTPCacheDownloadBacklogTests {
    /// With the HTTP cache on, a download's task is the cache's exchange, which wraps the
    /// network's. When the file falls behind, the download must ask the network's task whether it
    /// can pause: FoundationNetworking's cannot, and suspending it would only hold its events in
    /// memory until `maximumHeldBytes` failed the download. It keeps writing instead; a task that
    /// can pause is held back. Either way the file arrives whole.
    @Test(arguments: TransportKind.allCases)
    func aCachedDownloadWhoseFileFallsBehindArrivesWhole(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let length = 12 << 20
            // The download holds back (or, where it cannot, keeps writing) past 8 MiB waiting.
            let gate = ArrivalGate(threshold: 8 << 20)
            let network: any Transport =
                switch transport {
                case .urlSession: URLSessionTransport(maximumHeldBytes: 1 << 20)
                case .asyncHTTPClient: AsyncHTTPClientTransport()
                }
            let session = Session(
                configuration: .init { $0.httpCache = .memory(byteLimit: 64 << 20) },
                transport: network,
                eventMonitors: [gate]
            )
            let request = session.download(
                server.url("/range/\(length)?chunk_size=65536"),
                shouldAutomaticallyResume: false
            )
            request.file.queue.async { [gate] in _ = gate.semaphore.wait(timeout: .now() + 20) }
            request.resume()
            let url = try await request.validate().serializingDownloadedFileURL().value
            gate.open()
            #expect(try Data(contentsOf: url) == rangePattern(length))
            #expect(request.allMetrics.count == 1)
            try? FileManager.default.removeItem(at: url)
            await session.invalidate()
        }
    }
}
