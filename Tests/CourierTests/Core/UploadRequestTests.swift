import Courier
import CourierHashes
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `/upload` answers: how many bytes arrived and their SHA-256.
struct UploadReceipt: Decodable, Equatable {
    let bytes: Int
    let sha256: String

    init(bytes: Int, sha256: String) {
        self.bytes = bytes
        self.sha256 = sha256
    }

    /// The receipt the server should give for `data`.
    init(of data: Data) {
        self.init(bytes: data.count, sha256: SHA256.hexDigest(of: data))
    }
}

/// `count` pseudo-random bytes (seeded, so a failure reproduces), made eight at a time: test
/// bodies run on the few threads Swift concurrency has, and a slow loop here starves other tests.
func testBytes(_ count: Int, seed: UInt64 = 42) -> Data {
    var state = seed
    var words = [UInt64](repeating: 0, count: (count + 7) / 8)
    for index in words.indices {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        words[index] = state ^ (state >> 29)
    }
    return words.withUnsafeBytes { Data($0.prefix(count)) }
}

/// 16 MiB from memory (no disk in the suite's busy first seconds), more than loopback's socket
/// buffers hold, so a server that stops reading holds some of it back.
let largeStreamLength: Int64 = 16 << 20
let largeStream = RequestBody.stream(length: largeStreamLength) {
    InputStream(data: Data(repeating: 7, count: Int(largeStreamLength)))
}

/// A file of `count` bytes in `directory`, for uploads whose content does not matter.
func writeFile(count: Int, in directory: URL) throws -> URL {
    let file = directory.appendingPathComponent("large.bin")
    try Data(repeating: 7, count: count).write(to: file)
    return file
}

/// A new temporary directory, removed by `body`'s end.
func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// A retry policy that retries POST too, at once.
private let retryingPOST = RetryPolicy(
    retryLimit: 2,
    exponentialBackoffBase: 0,
    exponentialBackoffScale: 0,
    retryableHTTPMethods: [.post],
    retriesNonIdempotentRequests: true
)

@Suite struct UploadRequestTests {
    @Test(arguments: TransportKind.allCases)
    func uploadsData(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let body = testBytes(100_000)
            let request = session.upload(body, to: server.url("/upload"))
            let updates = request.uploadProgressUpdates()
            let receipt = try await request.validate().serializingDecodable(UploadReceipt.self).value
            var fractions: [Double] = []
            // The sequence ends with the request.
            for await update in updates { fractions.append(update.fractionCompleted) }
            #expect(fractions.last == 1)
            #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 })
            #expect(receipt == UploadReceipt(of: body))
            #expect(request.uploadProgress.completedUnitCount == Int64(body.count))
            #expect(request.uploadProgress.totalUnitCount == Int64(body.count))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func uploadsAFileWithItsLength(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                // Three chunks of 128 KiB and a short one, read ahead of the connection: any
                // reordering or loss shows in the digest.
                let body = testBytes(400_000)
                let file = directory.appendingPathComponent("body.bin")
                try body.write(to: file)
                let request = session.upload(file, to: server.url("/upload"))
                let receipt = try await request.validate().serializingDecodable(UploadReceipt.self).value
                #expect(receipt == UploadReceipt(of: body))
                #expect(request.uploadProgress.completedUnitCount == Int64(body.count))
                #expect(request.uploadProgress.totalUnitCount == Int64(body.count))
                // A file's length is known: it is sent with Content-Length, not chunked.
                let small = directory.appendingPathComponent("small.txt")
                try Data("hello".utf8).write(to: small)
                let echo = try await session.upload(
                    small,
                    to: server.url("/anything"),
                    headers: ["Content-Type": "text/plain"]
                )
                .validate().serializingDecodable(BodyEcho.self).value
                #expect(echo.headers["Content-Length"] == "5")
                #expect(echo.headers["Transfer-Encoding"] == nil)
                #expect(echo.data == "hello")
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func uploadsAStreamChunked(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let body = testBytes(300_000, seed: 7)
            let receipt = try await session.upload(InputStream(data: body), to: server.url("/upload")).validate()
                .serializingDecodable(UploadReceipt.self).value
            #expect(receipt == UploadReceipt(of: body))
            // libcurl would label a POST body form-encoded, and httpbin would then echo it as a form.
            let echo = try await session.upload(
                InputStream(data: Data("streamed".utf8)),
                to: server.url("/anything"),
                headers: ["Content-Type": "text/plain"]
            )
            .validate().serializingDecodable(BodyEcho.self).value
            #expect(echo.headers["Transfer-Encoding"] == "chunked")
            #expect(echo.data == "streamed")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamOfKnownLengthIsSentWithIt(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let streamed = RequestBody.stream(length: 8) { InputStream(data: Data("streamed".utf8)) }
            let echo = try await session.upload(
                streamed,
                to: server.url("/anything"),
                headers: ["Content-Type": "text/plain"]
            )
            .validate().serializingDecodable(BodyEcho.self).value
            #expect(echo.headers["Content-Length"] == "8")
            #expect(echo.headers["Transfer-Encoding"] == nil)
            #expect(echo.data == "streamed")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRetriedUploadReopensItsBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: retryingPOST)
            let body = testBytes(100_000, seed: 3)
            let opened = Mutex(0)
            let streamed = RequestBody.stream(length: Int64(body.count)) {
                opened.withLock { $0 += 1 }
                return InputStream(data: body)
            }
            // The first attempt fails with 503 after the body was sent; the retry sends it again.
            let request = session.upload(streamed, to: server.url("/fault/flaky/reopen?times=1&status=503"))
            _ = try await request.validate().serializingData().value
            #expect(request.retryCount == 1)
            #expect(opened.withLock { $0 } == 2)
            #expect(request.allMetrics.map(\.bytesSent) == [Int64(body.count), Int64(body.count)])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSingleUseStreamIsNotRetried(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: retryingPOST)
            let request = session.upload(
                InputStream(data: Data("once".utf8)),
                to: server.url("/fault/flaky/once?times=1&status=503")
            )
            let error = await request.validate().serializingData().result.failure
            #expect(error?.responseCode == 503)
            #expect(request.retryCount == 0)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aMissingFileFailsBeforeSending(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let missing = directory.appendingPathComponent("missing.bin")
                let error = await session.upload(missing, to: server.url("/upload")).serializingData().result.failure
                #expect(error?.kind == .createUploadableFailed)
                #expect(error?.localizedDescription.contains("missing.bin") == true)
                let directoryError = await session.upload(directory, to: server.url("/upload")).serializingData()
                    .result.failure
                #expect(directoryError?.kind == .createUploadableFailed)
                await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                    try await server.waitForRequests(1, timeout: .milliseconds(100))
                }
                await session.invalidate()
            }
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: TransportKind.allCases)
    func anUploadCutByTheServerFailsOnce(transport: TransportKind) async throws {
        // The server resets the connection after 1 MiB of the body, while the rest is still
        // being read and written.
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let file = try writeFile(count: 8 << 20, in: directory)
                let request = session.upload(file, to: server.url("/fault/upload/reset?after=1048576"))
                let answers = HandlerResponses(of: request)
                let response = await answers.first()
                #expect(response?.error?.kind == .transportFailed)
                // Not how much was sent: once the server has read 1 MiB quickly, loopback's
                // receive buffer grows (up to 32 MiB here) and may take the rest of the body
                // before the reset, so the client can have handed over all of it.
                await session.invalidate()
                #expect(answers.calls.value == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: TransportKind.allCases)
    func anUploadTheServerStopsReadingTimesOut(transport: TransportKind) async throws {
        // The server stops reading after the first piece: the body's writes back up and wait
        // until the idle timeout ends the attempt, which only fires once nothing moved for it.
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.timeoutInterval = 1 }
            let request = session.upload(largeStream, to: server.url("/fault/upload/stall?after=0"))
            let answers = HandlerResponses(of: request)
            let response = await answers.first()
            #expect(response?.error?.urlError?.code == .timedOut)
            #expect(request.uploadProgress.completedUnitCount < largeStreamLength, "the server read only part of it")
            await session.invalidate()
            #expect(answers.calls.value == 1)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: TransportKind.allCases)
    func cancellingAnUploadTheServerDoesNotReadEndsIt(transport: TransportKind) async throws {
        // The server stops reading after the first piece and never answers; the cancel lands
        // while the body is being written or waits to be.
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.upload(largeStream, to: server.url("/fault/upload/stall?after=0"))
            let answers = HandlerResponses(of: request)
            try await server.waitForRequests(1)
            request.cancel()
            let response = await answers.first()
            #expect(response?.error?.isExplicitlyCancelledError == true)
            #expect(request.state == .cancelled)
            await session.invalidate()
            #expect(answers.calls.value == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamThatCannotOpenFailsTheUpload(transport: TransportKind) async throws {
        struct Unavailable: Error {}
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let body = RequestBody.stream { throw Unavailable() }
            let error = await session.upload(body, to: server.url("/upload")).serializingData().result.failure
            #expect(error?.kind == .createUploadableFailed)
            #expect(error?.underlyingError is Unavailable)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamReadByAnEarlierUploadFailsTheSecond(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let body = Data("read once".utf8)
            let stream = InputStream(data: body)
            let first = try await session.upload(stream, to: server.url("/upload")).validate()
                .serializingDecodable(UploadReceipt.self).value
            #expect(first == UploadReceipt(of: body))
            // The stream is at its end (or closed) now: sending it would send nothing, or trap.
            let second = await session.upload(stream, to: server.url("/upload")).serializingData().result.failure
            #expect(second?.kind == .createUploadableFailed)
            #expect(second?.localizedDescription.contains("read already") == true)
            // A stream read to its end but left open is refused as well.
            let drained = InputStream(data: body)
            drained.open()
            var buffer = [UInt8](repeating: 0, count: 64)
            while drained.read(&buffer, maxLength: buffer.count) > 0 {}
            let third = await session.upload(drained, to: server.url("/upload")).serializingData().result.failure
            #expect(third?.kind == .createUploadableFailed)
            // The session still works.
            let after = try await session.upload(InputStream(data: body), to: server.url("/upload")).validate()
                .serializingDecodable(UploadReceipt.self).value
            #expect(after == UploadReceipt(of: body))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamThatFailsToOpenFailsTheUpload(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let missing = directory.appendingPathComponent("gone.bin")
                let stream = try #require(InputStream(fileAtPath: missing.path))
                let error = await session.upload(stream, to: server.url("/upload")).serializingData().result.failure
                #expect(error?.kind == .createUploadableFailed)
                // Per attempt, too: a closure whose stream fails to open.
                let made = RequestBody.stream { InputStream(fileAtPath: missing.path) ?? InputStream(data: Data()) }
                let madeError = await session.upload(made, to: server.url("/upload")).serializingData().result.failure
                // Failing is the point: FoundationNetworking used to send such a stream as an empty
                // body and succeed. (AsyncHTTPClient may send the head before the body fails, so the
                // server's request count proves nothing.)
                #expect(madeError?.kind == .createUploadableFailed)
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases, [UInt64.max, 0])
    func uploadsAMultipartForm(transport: TransportKind, threshold: UInt64) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let file = directory.appendingPathComponent("report.pdf")
                let fileContent = testBytes(200_000, seed: 11)
                try fileContent.write(to: file)
                // A threshold of 0 sends every form through a temporary file.
                let fileManager = SignallingFileManager()
                let request = session.upload(
                    multipartFormData: { form in
                        form.append(Data("Ada".utf8), withName: "name")
                        form.append(file, withName: "report")
                    },
                    to: server.url("/upload/multipart"),
                    usingThreshold: threshold,
                    fileManager: fileManager
                )
                let receipt = try await request.validate().serializingDecodable(MultipartReceipt.self).value
                #expect(
                    receipt.parts == [
                        .init(
                            name: "name",
                            filename: nil,
                            contentType: nil,
                            bytes: 3,
                            sha256: SHA256.hexDigest(of: Data("Ada".utf8))
                        ),
                        .init(
                            name: "report",
                            filename: "report.pdf",
                            contentType: "application/pdf",
                            bytes: fileContent.count,
                            sha256: SHA256.hexDigest(of: fileContent)
                        ),
                    ]
                )
                let contentType = request.performedRequests.first?.value(forHTTPHeaderField: "Content-Type")
                #expect(contentType?.hasPrefix("multipart/form-data; boundary=") == true)
                let body = try #require(request.uploadable)
                #expect((body.fileURL != nil) == (threshold == 0))
                if let encodedFile = body.fileURL {
                    // In a folder of the user's own that no one else may enter.
                    let folder = encodedFile.deletingLastPathComponent()
                    #expect(folder.lastPathComponent == "CourierMultipart-\(geteuid())")
                    let attributes = try FileManager.default.attributesOfItem(atPath: folder.path)
                    #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o700)
                    let removed = await value(within: hangLimit) { await fileManager.waitForRemoval(of: encodedFile) }
                    #expect(removed == true, "the encoded form is removed by the request's file manager")
                    #expect(!FileManager.default.fileExists(atPath: encodedFile.path))
                }
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFormsContentTypeCanBeSet(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let form = MultipartFormData(boundary: "courier-mixed")
            form.append(Data("Ada".utf8), withName: "name")
            form.contentType = "multipart/mixed; boundary=courier-mixed"
            let request = session.upload(multipartFormData: form, to: server.url("/upload"))
            let receipt = try await request.validate().serializingDecodable(UploadReceipt.self).value
            #expect(receipt == UploadReceipt(of: try form.encode()))
            let sent = request.performedRequests.first?.value(forHTTPHeaderField: "Content-Type")
            #expect(sent == "multipart/mixed; boundary=courier-mixed")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anUploadableFileIsSentAndRemovedWhenAsked(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let file = directory.appendingPathComponent("once.bin")
                let content = testBytes(50_000, seed: 5)
                try content.write(to: file)
                let fileManager = SignallingFileManager()
                var urlRequest = URLRequest(url: server.url("/upload"))
                urlRequest.httpMethod = "POST"
                let request = session.upload(
                    UploadRequest.Uploadable.file(file, shouldRemove: true),
                    with: urlRequest,
                    fileManager: fileManager
                )
                let receipt = try await request.validate().serializingDecodable(UploadReceipt.self).value
                #expect(receipt == UploadReceipt(of: content))
                #expect(request.fileManager === fileManager)
                let removed = await value(within: hangLimit) { await fileManager.waitForRemoval(of: file) }
                #expect(removed == true)
                #expect(!FileManager.default.fileExists(atPath: file.path))
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anUploadConvertibleMakesTheRequestAndItsBody(transport: TransportKind) async throws {
        struct Report: UploadConvertible {
            let url: URL
            let content: Data?

            func asURLRequest() throws -> URLRequest {
                var request = URLRequest(url: url)
                request.httpMethod = "PUT"
                return request
            }

            func createUploadable() throws -> UploadRequest.Uploadable {
                guard let content else { throw CocoaError(.fileReadNoPermission) }
                return .data(content)
            }
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let content = testBytes(30_000, seed: 9)
            let request = session.upload(Report(url: server.url("/upload"), content: content))
            let receipt = try await request.validate().serializingDecodable(UploadReceipt.self).value
            #expect(receipt == UploadReceipt(of: content))
            #expect(request.performedRequests.first?.httpMethod == "PUT")
            let failure = await session.upload(Report(url: server.url("/upload"), content: nil))
                .serializingData().result.failure
            #expect(failure?.kind == .createUploadableFailed)
            #expect(failure?.underlyingError as? CocoaError == CocoaError(.fileReadNoPermission))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aMultipartFormWithAMissingFileFailsBeforeSending(transport: TransportKind) async throws {
        try await withTemporaryDirectory { directory in
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let error = await session.upload(
                    multipartFormData: { $0.append(directory.appendingPathComponent("gone.bin"), withName: "file") },
                    to: server.url("/upload/multipart")
                ).serializingData().result.failure
                #expect(error?.kind == .multipartEncodingFailed)
                #expect(error?.localizedDescription.contains("gone.bin") == true)
                await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                    try await server.waitForRequests(1, timeout: .milliseconds(100))
                }
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func uploadsFilesAndFormsToRealHttpbin(transport: TransportKind) async throws {
        guard let httpbin = ProcessInfo.processInfo.environment["HTTPBIN_URL"] else { return }
        struct Posted: Decodable {
            let data: String
            let form: [String: String]
            let files: [String: String]
        }
        try await withTemporaryDirectory { directory in
            let session = transport.makeSession()
            let file = directory.appendingPathComponent("note.txt")
            try Data("a file from disk".utf8).write(to: file)
            let echoed = try await session.upload(file, to: "\(httpbin)/post", headers: ["Content-Type": "text/plain"])
                .validate().serializingDecodable(Posted.self).value
            #expect(echoed.data == "a file from disk")
            let form = try await session.upload(
                multipartFormData: { form in
                    form.append(Data("Ada".utf8), withName: "name")
                    form.append(file, withName: "note")
                },
                to: "\(httpbin)/post"
            ).validate().serializingDecodable(Posted.self).value
            #expect(form.form == ["name": "Ada"])
            #expect(form.files == ["note": "a file from disk"])
            await session.invalidate()
        }
    }
}

/// What `/upload/multipart` answers: each part's name, file name, type, size and SHA-256.
struct MultipartReceipt: Decodable {
    struct Part: Decodable, Equatable {
        var name: String
        var filename: String?
        var contentType: String?
        var bytes: Int
        var sha256: String
    }

    var parts: [Part]
    var bytes: Int
}

/// The parts of httpbin's echo these tests read.
struct BodyEcho: Decodable {
    let headers: [String: String]
    let data: String
}

/// A file manager that signals each removal, so a test can wait for a file to be removed.
final class SignallingFileManager: FileManager, @unchecked Sendable {
    // `@unchecked Sendable`: its own state sits behind `state`'s lock.
    private let state = TestLock((removed: Set<String>(), waiters: [(String, CheckedContinuation<Bool, Never>)]()))

    override func removeItem(at url: URL) throws {
        defer {
            let path = url.standardizedFileURL.path
            let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                state.removed.insert(path)
                let ready = state.waiters.filter { $0.0 == path }.map(\.1)
                state.waiters.removeAll { $0.0 == path }
                return ready
            }
            for waiter in ready { waiter.resume(returning: true) }
        }
        try super.removeItem(at: url)
    }

    /// Returns once `url` has been removed through this file manager.
    func waitForRemoval(of url: URL) async -> Bool {
        let path = url.standardizedFileURL.path
        return await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.removed.contains(path) { return true }
                state.waiters.append((path, continuation))
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }
}
