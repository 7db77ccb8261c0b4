import CourierHashes
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body `/range/:n` serves: the `a`-`z` pattern. Built by doubling, not byte by byte: test
/// bodies run on the few threads Swift concurrency has, and a slow loop here starves other tests.
func rangePattern(_ length: Int) -> Data {
    var pattern = Data("abcdefghijklmnopqrstuvwxyz".utf8)
    while pattern.count < length { pattern.append(pattern) }
    return pattern.prefix(length)
}

/// The permission bits of the file or folder at `url`, or -1 if it cannot be read.
func permissions(of url: URL) -> Int {
    var status = stat()
    guard lstat(url.path, &status) == 0 else { return -1 }
    return Int(status.st_mode & 0o777)
}

/// The status code, read from the head; its `HTTPURLResponse` form answers `-1`, so a caller
/// that built one and called that form shows.
private struct HeadStatusSerializer: ResponseSerializer {
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> Int {
        -1
    }

    func serialize(request: URLRequest?, head: ResponseHead?, data: Data?, error: CourierError?) throws -> Int {
        if let error { throw error }
        return head?.statusCode ?? 0
    }
}

/// Retries GET at once after a dropped connection.
private let retryingAtOnce = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 0, exponentialBackoffScale: 0)

@Suite struct DownloadRequestTests {
    @Test(arguments: TransportKind.allCases)
    func downloadsToTheDestination(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let target = directory.appendingPathComponent("pattern.bin")
                let request = session.download(server.url("/range/300000"), to: { _, _ in (target, []) })
                let fileURL = try await request.validate().serializingDownloadedFileURL().value
                #expect(fileURL == target)
                #expect(try Data(contentsOf: target) == rangePattern(300_000))
                #expect(!FileManager.default.fileExists(atPath: request.temporaryURL.path), "moved, not copied")
                #expect(request.downloadProgress.fractionCompleted == 1)
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadsArePrivateToTheUser(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let target = directory.appendingPathComponent("private.bin")
                let seen = Mutex<(file: Int, folder: Int, folderName: String)?>(nil)
                // The destination runs before the move: the file is still in the download folder.
                let request = session.download(
                    server.url("/range/100000"),
                    to: { temporaryURL, _ in
                        let folder = temporaryURL.deletingLastPathComponent()
                        seen.withLock {
                            $0 = (permissions(of: temporaryURL), permissions(of: folder), folder.lastPathComponent)
                        }
                        return (target, [])
                    }
                )
                _ = try await request.validate().serializingDownloadedFileURL().value
                let observed = try #require(seen.withLock { $0 })
                #expect(observed.file == 0o600)
                #expect(observed.folder == 0o700)
                #expect(observed.folderName == "CourierDownloads-\(geteuid())", "one folder per user")
                #expect(permissions(of: target) == 0o600, "moved, it keeps its mode")
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func resumeDataPointingOutsideCouriersFolderIsRefused(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                // Someone made the folder's path a link to a place of their choosing, with a
                // partial file in it, and handed over resume data naming it.
                let elsewhere = directory.appendingPathComponent("elsewhere")
                try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
                try Data("abc".utf8).write(to: elsewhere.appendingPathComponent("planted.download"))
                let link = directory.appendingPathComponent("CourierDownloads-\(geteuid())")
                try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
                var request = URLRequest(url: server.url("/range/1000"))
                request.httpMethod = "GET"
                let resumeData = try DownloadResumeData(
                    request: request,
                    bytesReceived: 3,
                    temporaryFilePath: link.appendingPathComponent("planted.download").path,
                    entityTag: "range1000",
                    lastModified: nil,
                    expectedLength: 1000
                ).encoded()
                let target = directory.appendingPathComponent("never.bin")
                let error = await session.download(resumingWith: resumeData, to: { _, _ in (target, []) })
                    .serializingDownloadedFileURL().result.failure
                // Refused before any file is touched: the folder is not Courier's own, whatever
                // its name. (A link at Courier's own path is refused too: `DownloadFileTests`.)
                #expect(error?.kind == .invalidResumeData)
                #expect(try Data(contentsOf: elsewhere.appendingPathComponent("planted.download")) == Data("abc".utf8))
                #expect(!FileManager.default.fileExists(atPath: target.path))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func serializersReadTheDownloadedFile(transport: TransportKind) async throws {
        struct Slideshow: Decodable, Sendable {
            struct Show: Decodable, Sendable { let title: String }
            let slideshow: Show
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let show = try await session.download(server.url("/json")).validate(contentType: ["application/json"])
                .serializingDecodable(Slideshow.self).value
            #expect(show.slideshow.title == "Sample Slide Show")
            let bytes = try await session.download(server.url("/range/1000")).serializingData().value
            #expect(bytes == rangePattern(1000))
            let text = try await session.download(server.url("/encoding/utf8")).serializingString().value
            #expect(text.contains("Unicode Demo"))
            let wrongType = await session.download(server.url("/range/10")).validate(contentType: ["application/json"])
                .serializingData().result.failure
            #expect(wrongType?.kind == .responseValidationFailed)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDownloadThatFailsValidationLeavesNoFile(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let target = directory.appendingPathComponent("missing.bin")
                let request = session.download(server.url("/status/404"), to: { _, _ in (target, []) })
                let response = await request.validate().serializingDownloadedFileURL().response
                #expect(response.error?.responseCode == 404)
                #expect(response.fileURL == nil)
                #expect(!FileManager.default.fileExists(atPath: target.path))
                #expect(!FileManager.default.fileExists(atPath: request.temporaryURL.path))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func destinationOptionsDecideHowTheFileMoves(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let url = server.url("/range/1000")
                let nested = directory.appendingPathComponent("a/b/file.bin")
                let noDirectory = await session.download(url, to: { _, _ in (nested, []) })
                    .serializingDownloadedFileURL()
                    .result.failure
                #expect(noDirectory?.kind == .downloadedFileMoveFailed)
                #expect(noDirectory?.destinationURL == nested)
                #expect(noDirectory?.sourceURL?.path.contains("CourierDownloads-") == true, "the temporary file")
                #expect(CourierError.explicitlyCancelled.sourceURL == nil)
                let created = try await session.download(url, to: { _, _ in (nested, .createIntermediateDirectories) })
                    .serializingDownloadedFileURL().value
                #expect(try Data(contentsOf: created) == rangePattern(1000))

                let existing = directory.appendingPathComponent("existing.bin")
                try Data("old".utf8).write(to: existing)
                let kept = await session.download(url, to: { _, _ in (existing, []) }).serializingDownloadedFileURL()
                    .result
                    .failure
                #expect(kept?.kind == .downloadedFileMoveFailed)
                #expect(try Data(contentsOf: existing) == Data("old".utf8), "an existing file stays unless asked")
                _ = try await session.download(url, to: { _, _ in (existing, .removePreviousFile) })
                    .serializingDownloadedFileURL().value
                #expect(try Data(contentsOf: existing) == rangePattern(1000))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func suggestedDestinationUsesASanitizedContentDispositionName(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let disposition = "attachment; filename=\"../../escape.txt\""
                var components = URLComponents(url: server.url("/response-headers"), resolvingAgainstBaseURL: false)
                components?.queryItems = [URLQueryItem(name: "Content-Disposition", value: disposition)]
                let url = try #require(components?.url)
                let fileURL = try await session.download(
                    url,
                    to: DownloadRequest.suggestedDownloadDestination(in: directory)
                ).validate().serializingDownloadedFileURL().value
                #expect(fileURL == directory.appendingPathComponent("escape.txt"))
                #expect(FileManager.default.fileExists(atPath: fileURL.path))
                // Without Content-Disposition: the URL's last path component.
                let byPath = try await session.download(
                    server.url("/range/26"),
                    to: DownloadRequest.suggestedDownloadDestination(in: directory)
                ).serializingDownloadedFileURL().value
                #expect(byPath == directory.appendingPathComponent("26"))
                await session.invalidate()
            }
        }
    }

    /// A download stopped mid-body by a timeout (here the request's deadline) keeps what it
    /// received as resume data, as after a dropped connection.
    @Test(arguments: TransportKind.allCases)
    func aTimeoutMidBodyLeavesResumeData(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let length = 200_000
            // The body trickles over 60 s; the deadline stops it after 3 s, roomy enough for the
            // first piece to arrive on a loaded machine. (Resuming from such data is what
            // `resumesAfterCancellingWithResumeData` checks.)
            let slow = server.url("/range/\(length)?duration=60&chunk_size=2000")
            let deadlined = transport.makeSession { $0.requestDeadline = 3 }
            let timedOut = await deadlined.download(slow).serializingDownloadedFileURL().response
            #expect(timedOut.error?.urlError?.code == .timedOut)
            let resumeData = try #require(timedOut.resumeData, "a timed-out download can resume")
            let decoded = try DownloadResumeData(data: resumeData)
            #expect(decoded.bytesReceived > 0 && decoded.bytesReceived < Int64(length))
            try? FileManager.default.removeItem(atPath: decoded.temporaryFilePath)
            await deadlined.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func resumesAfterCancellingWithResumeData(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let length = 200_000
                let resumeData = try await Self.partialDownload(of: length, on: session, server: server)
                let decoded = try DownloadResumeData(data: resumeData)
                #expect(decoded.bytesReceived > 0 && decoded.bytesReceived < Int64(length))
                #expect(decoded.entityTag == "range\(length)")
                let size =
                    try FileManager.default.attributesOfItem(atPath: decoded.temporaryFilePath)[.size] as? NSNumber
                #expect(size?.int64Value ?? -1 >= decoded.bytesReceived)

                let target = directory.appendingPathComponent("resumed.bin")
                let resumed = session.download(resumingWith: resumeData, to: { _, _ in (target, []) })
                guard case .resumeData(let given) = resumed.downloadable else {
                    Issue.record("a resumed download says it was made from resume data")
                    return
                }
                #expect(given == resumeData)
                _ = try await resumed.validate().serializingDownloadedFileURL().value
                #expect(try Data(contentsOf: target) == rangePattern(length))
                #expect(
                    resumed.performedRequests.first?.value(forHTTPHeaderField: "Range")
                        == "bytes=\(decoded.bytesReceived)-"
                )
                #expect(resumed.response?.statusCode == 206)
                #expect(!FileManager.default.fileExists(atPath: decoded.temporaryFilePath))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func resumesAutomaticallyAfterADroppedConnection(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession(interceptor: retryingAtOnce)
                let target = directory.appendingPathComponent("dropped.bin")
                let request = session.download(
                    server.url("/fault/drop/500000?after=150000&key=auto"),
                    to: { _, _ in
                        (target, [])
                    }
                )
                _ = try await request.validate().serializingDownloadedFileURL().value
                let expected = rangePattern(500_000)
                #expect(SHA256.hexDigest(of: try Data(contentsOf: target)) == SHA256.hexDigest(of: expected))
                #expect(request.retryCount == 1)
                let range = request.performedRequests.last?.value(forHTTPHeaderField: "Range")
                #expect(range?.hasPrefix("bytes=") == true && range != "bytes=0-")
                #expect(request.response?.statusCode == 206)
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aTruncatedDownloadLeavesNoFileButResumeData(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let target = directory.appendingPathComponent("truncated.bin")
                let response = await session.download(
                    server.url("/fault/drop/100000?after=40000&key=cut"),
                    to: { _, _ in
                        (target, [])
                    }
                ).serializingDownloadedFileURL().response
                #expect(response.error?.urlError?.code == .networkConnectionLost)
                #expect(!FileManager.default.fileExists(atPath: target.path))
                let resumeData = try #require(response.resumeData)
                #expect(try DownloadResumeData(data: resumeData).bytesReceived == 40000)
                // The second request to the route is served whole: the rest arrives.
                _ = try await session.download(resumingWith: resumeData, to: { _, _ in (target, []) })
                    .serializingDownloadedFileURL().value
                #expect(try Data(contentsOf: target) == rangePattern(100_000))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aChangedFileStartsOver(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let length = 200_000
                var decoded = try DownloadResumeData(
                    data: try await Self.partialDownload(of: length, on: session, server: server)
                )
                decoded.entityTag = "an-older-version"
                let target = directory.appendingPathComponent("restarted.bin")
                let request = session.download(resumingWith: decoded.encoded(), to: { _, _ in (target, []) })
                _ = try await request.validate().serializingDownloadedFileURL().value
                #expect(request.response?.statusCode == 200)
                #expect(try Data(contentsOf: target) == rangePattern(length))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anUnsatisfiableRangeStartsOver(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let length = 200_000
                var decoded = try DownloadResumeData(
                    data: try await Self.partialDownload(of: length, on: session, server: server)
                )
                // A partial file longer than the body: the server cannot serve what follows it.
                let partial = try FileHandle(forWritingTo: URL(fileURLWithPath: decoded.temporaryFilePath))
                try partial.truncate(atOffset: UInt64(length + 100))
                try partial.close()
                decoded.bytesReceived = Int64(length + 100)
                let target = directory.appendingPathComponent("after416.bin")
                let request = session.download(resumingWith: decoded.encoded(), to: { _, _ in (target, []) })
                _ = try await request.validate().serializingDownloadedFileURL().value
                #expect(request.allMetrics.map(\.statusCode) == [416, 200])
                #expect(try Data(contentsOf: target) == rangePattern(length))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func unusableResumeDataFailsClearly(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let garbage = await session.download(resumingWith: Data("not resume data".utf8))
                .serializingDownloadedFileURL().result.failure
            #expect(garbage?.kind == .invalidResumeData)
            var decoded = try DownloadResumeData(
                data: try await Self.partialDownload(of: 100_000, on: session, server: server)
            )
            try FileManager.default.removeItem(atPath: decoded.temporaryFilePath)
            let gone = await session.download(resumingWith: decoded.encoded()).serializingDownloadedFileURL().result
                .failure
            #expect(gone?.kind == .invalidResumeData)
            decoded.version = 99
            let future = await session.download(resumingWith: decoded.encoded()).serializingDownloadedFileURL()
                .result.failure
            #expect(future?.kind == .invalidResumeData)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func progressReachesOneAndNeverGoesBack(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let seen = Mutex<[Double]>([])
            // 4 KB pieces: a thousand of them, far fewer updates.
            let request = session.download(server.url("/range/4000000?chunk_size=4000"))
                .downloadProgress { progress in seen.withLock { $0.append(progress.fractionCompleted) } }
            _ = try await request.validate().serializingDownloadedFileURL().value
            // Handlers run on one serial queue, in order: the last one has run once this has.
            let values = await withCheckedContinuation { continuation in
                DispatchQueue.courierCallbacks.async { continuation.resume(returning: seen.withLock { $0 }) }
            }
            #expect(values.last == 1)
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
            let seconds = request.metrics.map { $0.endDate.timeIntervalSince($0.startDate) } ?? 0
            #expect(
                values.count >= 2 && Double(values.count) <= 102 + 20 * (seconds + 1),
                "\(values.count) in \(seconds) s"
            )
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aResumeThatFailsKeepsThePartialFile(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let length = 200_000
                let original = try DownloadResumeData(
                    data: try await Self.partialDownload(of: length, on: session, server: server)
                )
                // No server at all: the attempt fails before any head arrives.
                let closed = try ClosedPort()
                var unreachable = original
                unreachable.url = try #require(URL(string: "http://127.0.0.1:\(closed.port)/range/\(length)"))
                let offline = await session.download(resumingWith: unreachable.encoded()).serializingDownloadedFileURL()
                    .response
                #expect(offline.error?.urlError?.code == .cannotConnectToHost)
                // A server error: its page is not the file's, which stays as it was.
                var refused = original
                refused.url = server.url("/status/503")
                let failed = await session.download(resumingWith: refused.encoded()).validate()
                    .serializingDownloadedFileURL().response
                #expect(failed.error?.responseCode == 503)
                for resumeData in [offline.resumeData, failed.resumeData] {
                    let kept = try DownloadResumeData(data: try #require(resumeData, "the partial file is kept"))
                    #expect(kept.bytesReceived == original.bytesReceived)
                }
                let target = directory.appendingPathComponent("finally.bin")
                let request = session.download(resumingWith: original.encoded(), to: { _, _ in (target, []) })
                _ = try await request.validate().serializingDownloadedFileURL().value
                #expect(request.response?.statusCode == 206)
                #expect(try Data(contentsOf: target) == rangePattern(length))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func resumesFromRealHttpbin(transport: TransportKind) async throws {
        guard let httpbin = ProcessInfo.processInfo.environment["HTTPBIN_URL"] else { return }
        try await withTemporaryDirectory { directory in
            let session = transport.makeSession()
            let length = 100_000
            let partial = try await Self.partialDownload(of: length, on: session) { duration in
                try #require(URL(string: "\(httpbin)/range/\(length)?duration=\(duration)&chunk_size=5000"))
            }
            let target = directory.appendingPathComponent("httpbin.bin")
            let request = session.download(resumingWith: partial, to: { _, _ in (target, []) })
            _ = try await request.validate().serializingDownloadedFileURL().value
            #expect(request.response?.statusCode == 206)
            #expect(try Data(contentsOf: target) == rangePattern(length))
            await session.invalidate()
        }
    }

    /// Resume data for a download of `/range/length` cancelled part-way.
    static func partialDownload(of length: Int, on session: Session, server: TestServer) async throws -> Data {
        try await partialDownload(of: length, on: session) { duration in
            server.url("/range/\(length)?duration=\(duration)&chunk_size=5000")
        }
    }

    /// Resume data for a download of `length` bytes from `url(duration)` (a `/range` that takes
    /// `duration` seconds to send them), cancelled once 20,000 bytes have arrived. A cancel that
    /// comes only after the whole body did (a loaded machine: the progress callback ran late)
    /// leaves nothing to resume, so it is tried again with a slower body, at most twice.
    static func partialDownload(
        of length: Int,
        on session: Session,
        url: (Int) throws -> URL
    ) async throws -> Data {
        for duration in [2, 6, 18] {
            guard let data = await partialDownload(from: try url(duration), on: session) else { continue }
            if try DownloadResumeData(data: data).bytesReceived < length { return data }
        }
        Issue.record("every download ended before its cancel: nothing was left to resume")
        throw CancellationError()
    }

    /// Resume data for a download of `url` cancelled once 20,000 bytes have arrived; `nil` when
    /// none came in time, or the download had finished before the cancel.
    private static func partialDownload(from url: URL, on session: Session) async -> Data? {
        let request = session.download(url)
        let data = await value(within: hangLimit) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Data?, Never>) in
                let cancelled = Mutex(false)
                request.downloadProgress { [request] progress in
                    guard progress.completedUnitCount >= 20000 else { return }
                    let isFirst = cancelled.withLock { wasCancelled in
                        defer { wasCancelled = true }
                        return !wasCancelled
                    }
                    guard isFirst else { return }
                    request.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
                }
                request.resume()
            }
        }
        return data ?? nil
    }

    // MARK: - The response head

    @Test(arguments: TransportKind.allCases)
    func responsesCarryTheHeadAndBuildNoHTTPURLResponseUnlessRead(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.download(server.url("/range/1000")).validate()
            let response = await request.serializingData().response
            let head = try #require(response.head)
            #expect(head.statusCode == 200)
            #expect(response.value == rangePattern(1000))
            #expect(request.responseHead === head)
            #expect(response.description.hasPrefix("success (200, "))
            // URLSession hands over a ready HTTPURLResponse; over AsyncHTTPClient nothing built one.
            #expect(head.hasHTTPURLResponse == (transport == .urlSession))
            #expect(response.response?.statusCode == 200, "built when read")
            #expect(head.hasHTTPURLResponse)

            let urlResponse = await session.download(server.url("/range/10")).validate()
                .serializingDownloadedFileURL().response
            let urlHead = try #require(urlResponse.head)
            #expect(urlResponse.value != nil)
            #expect(urlHead.hasHTTPURLResponse == (transport == .urlSession))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func serializersAreGivenTheHead(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let response = await session.download(server.url("/range/10"))
                .serializingDownload(using: HeadStatusSerializer()).response
            #expect(response.value == 200, "the head form ran, not the HTTPURLResponse one")
            let head = try #require(response.head)
            #expect(head.hasHTTPURLResponse == (transport == .urlSession))
            await session.invalidate()
        }
    }
}
