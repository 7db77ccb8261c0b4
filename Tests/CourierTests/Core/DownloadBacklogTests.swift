import CourierTestServer
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Opens a download's stopped file queue once the transfer has been held back or broken off
/// (more than the high mark waiting), or once the whole body has arrived without either.
private final class BacklogGate: EventMonitor, @unchecked Sendable {
    // @unchecked Sendable: `semaphore` is thread-safe, and `isOpen` sits in a Mutex.
    let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Mutex(false)
    let highMark: Int64
    let length: Int64

    init(highMark: Int64, length: Int64) {
        self.highMark = highMark
        self.length = length
    }

    var receivesBodyPieces: Bool { true }

    /// How many `requestIsRetrying` events arrived: none is sent for a continuation.
    let retries = Mutex(0)

    func requestIsRetrying(_ request: Request) {
        retries.withLock { $0 += 1 }
    }

    func request(_ request: Request, didReceiveBodyPieceOf byteCount: Int) {
        guard let download = request as? DownloadRequest else { return }
        let stopped = download.peakPendingBytes > highMark
        guard stopped || download.downloadProgress.completedUnitCount >= length else { return }
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

// A download that loops (breaking off and continuing without end) fails here instead of hanging.
@Suite(.timeLimit(.minutes(1))) struct DownloadBacklogTests {
    /// The disk falls behind: the file queue stops until more than the mark waits. Over a
    /// transport that pauses, the transfer is held back; over one that cannot (URLSession on
    /// Linux), it is broken off and continued with a `Range`. Either way no more than about the
    /// mark waits in memory, and the file is whole.
    @Test(arguments: TransportKind.allCases)
    func aFileThatFallsBehindBoundsWhatWaits(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let length: Int64 = 6 << 20
            let highMark: Int64 = 512 << 10
            let gate = BacklogGate(highMark: highMark, length: length)
            let session = transport.makeSession(eventMonitors: [gate])
            let request = session.download(
                server.url("/range/\(length)?chunk_size=65536"),
                shouldAutomaticallyResume: false
            )
            request.setBacklogMarks(high: highMark, low: 128 << 10)
            // A continuation carries on from what the file holds: progress never falls back.
            let progressFell = Mutex((last: Int64(0), fell: false))
            request.downloadProgress(queue: DispatchQueue(label: "test.progress")) { progress in
                progressFell.withLock { seen in
                    if progress.completedUnitCount < seen.last { seen.fell = true }
                    seen.last = progress.completedUnitCount
                }
            }
            request.file.queue.async { [gate] in _ = gate.semaphore.wait(timeout: .now() + 30) }
            request.resume()
            let url = try await request.validate().serializingDownloadedFileURL().value
            gate.open()
            #expect(try Data(contentsOf: url) == rangePattern(Int(length)))
            #expect(!progressFell.withLock { $0.fell })
            let cannotPause = transport == .urlSession && !URLSessionTransport.pausesTransfers
            // A piece or two may be on their way when the transfer stops; the body is 6 MiB.
            #expect(request.peakPendingBytes <= highMark + (1 << 20), "waited: \(request.peakPendingBytes)")
            if cannotPause {
                #expect(request.breakOffCount >= 1)
                #expect(request.lastRequest?.value(forHTTPHeaderField: "Range")?.hasPrefix("bytes=") == true)
                #expect(request.lastRequest?.value(forHTTPHeaderField: "If-Range") == "range\(length)")
                #expect(request.allMetrics.count == request.breakOffCount + 1)
            } else {
                #expect(request.breakOffCount == 0)
                #expect(request.allMetrics.count == 1)
            }
            #expect(request.retryCount == 0, "a continuation is no retry")
            gate.queue.sync {}
            #expect(gate.retries.withLock { $0 } == 0, "no requestIsRetrying for a continuation")
            #expect(request.downloadProgress.fractionCompleted == 1)
            try? FileManager.default.removeItem(at: url)
            await session.invalidate()
        }
    }

    /// A body that cannot be continued (no length, no validator) is never broken off: it keeps
    /// writing, and arrives whole.
    @Test(arguments: TransportKind.allCases)
    func aBodyThatCannotBeContinuedKeepsWriting(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let length: Int64 = 3 << 20
            let highMark: Int64 = 256 << 10
            let gate = BacklogGate(highMark: highMark, length: length)
            let session = transport.makeSession(eventMonitors: [gate])
            let request = session.download(
                server.url("/stream-bytes/\(length)?seed=7&chunk_size=65536"),
                shouldAutomaticallyResume: false
            )
            request.setBacklogMarks(high: highMark, low: 64 << 10)
            request.file.queue.async { [gate] in _ = gate.semaphore.wait(timeout: .now() + 30) }
            request.resume()
            let url = try await request.validate().serializingDownloadedFileURL().value
            gate.open()
            let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
            #expect(size?.int64Value == length)
            #expect(request.breakOffCount == 0)
            #expect(request.allMetrics.count == 1)
            #expect(request.lastRequest?.value(forHTTPHeaderField: "Range") == nil)
            try? FileManager.default.removeItem(at: url)
            await session.invalidate()
        }
    }

    /// A download broken off on its very last piece has the whole body: it finishes without
    /// asking for more (a `Range` past the end would be refused, and the download start over).
    @Test(arguments: TransportKind.allCases)
    func aBodyThatPassesTheMarkOnItsLastPieceFinishes(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let length: Int64 = 1 << 20
            // One 1 MiB piece, at most, passes a mark just below the whole body only at its end.
            let highMark = length - 1
            let gate = BacklogGate(highMark: highMark, length: length)
            let session = transport.makeSession(eventMonitors: [gate])
            let request = session.download(
                server.url("/range/\(length)?chunk_size=65536"),
                shouldAutomaticallyResume: false
            )
            request.setBacklogMarks(high: highMark, low: 1)
            request.file.queue.async { [gate] in _ = gate.semaphore.wait(timeout: .now() + 30) }
            request.resume()
            let url = try await request.validate().serializingDownloadedFileURL().value
            gate.open()
            #expect(try Data(contentsOf: url) == rangePattern(Int(length)))
            #expect(request.allMetrics.count == 1, "no second attempt")
            #expect(request.lastRequest?.value(forHTTPHeaderField: "Range") == nil)
            if transport == .urlSession && !URLSessionTransport.pausesTransfers {
                #expect(request.breakOffCount == 1)
            }
            try? FileManager.default.removeItem(at: url)
            await session.invalidate()
        }
    }
    /// A server that says it serves ranges but answers a continuation with something else (the
    /// whole body again, or a range that starts elsewhere) is not trusted twice: the download is
    /// no more broken off, keeps writing, and arrives whole, with no retry counted.
    @Test(arguments: TransportKind.allCases, ["ignored", "misaligned"])
    func aServerThatDoesNotContinueIsNotAskedAgain(transport: TransportKind, ranges: String) async throws {
        try await TestServer.withRunningServer { server in
            let length: Int64 = 4 << 20
            let highMark: Int64 = 512 << 10
            let gate = BacklogGate(highMark: highMark, length: length)
            let session = transport.makeSession(eventMonitors: [gate])
            let request = session.download(
                server.url("/range/\(length)?chunk_size=65536&ranges=\(ranges)"),
                shouldAutomaticallyResume: false
            )
            request.setBacklogMarks(high: highMark, low: 128 << 10)
            request.file.queue.async { [gate] in _ = gate.semaphore.wait(timeout: .now() + 30) }
            request.resume()
            let url = try await request.validate().serializingDownloadedFileURL().value
            gate.open()
            #expect(try Data(contentsOf: url) == rangePattern(Int(length)))
            #expect(request.retryCount == 0)
            // Events sent before the request finished are on the monitor's queue already.
            gate.queue.sync {}
            #expect(gate.retries.withLock { $0 } == 0, "no requestIsRetrying for a continuation")
            if transport == .urlSession && !URLSessionTransport.pausesTransfers {
                #expect(request.breakOffCount == 1)
                // The first, its continuation, and (for a range that starts elsewhere) the start over.
                #expect(request.allMetrics.count == (ranges == "ignored" ? 2 : 3))
            } else {
                #expect(request.breakOffCount == 0)
                #expect(request.allMetrics.count == 1)
            }
            try? FileManager.default.removeItem(at: url)
            await session.invalidate()
        }
    }
}
