import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `file:` URLs, which Alamofire loads through URLSession: read by Courier the same way under
/// both transports, and never reachable through a server's redirect.
@Suite struct LocalFileTests {
    /// A fresh folder for one test, removed afterwards.
    private func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    @Test(arguments: TransportKind.allCases)
    func aFileLoadsAsTheBodyOfA200(transport: TransportKind) async throws {
        try await withFolder { folder in
            let file = folder.appendingPathComponent("notes.json")
            // Larger than one chunk, so it arrives in pieces.
            let body = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try body.write(to: file)
            let session = transport.makeSession()
            let response = await session.request(file.absoluteString).validate().serializingData().response
            #expect(response.value == body)
            #expect(response.response?.statusCode == 200)
            #expect(response.response?.value(forHTTPHeaderField: "Content-Type") == "application/json")
            #expect(response.response?.value(forHTTPHeaderField: "Content-Length") == "200000")
            #expect(response.metrics?.bytesReceived == 200_000)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aMissingFileOrAFolderFailsAsURLSessionWould(transport: TransportKind) async throws {
        try await withFolder { folder in
            let session = transport.makeSession()
            let missing = await session.request(folder.appendingPathComponent("gone.txt")).serializingData().result
            #expect(missing.failure?.urlError?.code == .fileDoesNotExist)
            let directory = await session.request(folder).serializingData().result
            #expect(directory.failure?.urlError?.code == .fileIsDirectory)
            var post = URLRequest(url: folder.appendingPathComponent("x"))
            post.method = .post
            post.httpBody = Data("x".utf8)
            let posted = await session.request(post).serializingData().result
            #expect(posted.failure?.urlError?.code == .unsupportedURL)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFileDownloadsToItsDestinationAndStaysWhereItWas(transport: TransportKind) async throws {
        try await withFolder { folder in
            let file = folder.appendingPathComponent("source.txt")
            try Data("hello".utf8).write(to: file)
            let target = folder.appendingPathComponent("copy/target.txt")
            let session = transport.makeSession()
            let url = try await session.download(file, to: { _, _ in (target, [.createIntermediateDirectories]) })
                .validate().serializingDownloadedFileURL().value
            #expect(url == target)
            #expect(try Data(contentsOf: target) == Data("hello".utf8))
            #expect(FileManager.default.fileExists(atPath: file.path))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCancelledFileRequestEndsCancelled(transport: TransportKind) async throws {
        try await withFolder { folder in
            let file = folder.appendingPathComponent("big.bin")
            try Data(count: 4 << 20).write(to: file)
            let session = transport.makeSession()
            let request = session.request(file)
            request.cancel()
            let result = await request.serializingData().result
            #expect(result.failure?.isExplicitlyCancelledError == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectHandlerCannotLeadToAFileEither(transport: TransportKind) async throws {
        try await withFolder { folder in
            let file = folder.appendingPathComponent("secret.txt")
            try Data("secret".utf8).write(to: file)
            try await TestServer.withRunningServer { server in
                let session = transport.makeSession()
                let result = await session.request(server.url("/redirect/1"))
                    .redirect(using: .modify { _, _, _ in URLRequest(url: file) })
                    .serializingData().result
                #expect(result.failure?.kind == .invalidURL, "\(result)")
                #expect(result.failure?.invalidURLReason?.contains("scheme") == true)
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func fileURLsCanBeRefusedAndOnlyNameThisMachine(transport: TransportKind) async throws {
        try await withFolder { folder in
            let file = folder.appendingPathComponent("notes.txt")
            try Data("notes".utf8).write(to: file)
            let refusing = transport.makeSession { $0.allowsFileURLs = false }
            let refused = await refusing.request(file).serializingData().result
            #expect(refused.failure?.kind == .invalidURL)
            await refusing.invalidate()

            let session = transport.makeSession()
            let remote = await session.request("file://fileserver\(file.path)").serializingData().result
            #expect(remote.failure?.kind == .invalidURL)
            let local = await session.request("file://localhost\(file.path)").serializingData().result
            #expect((try? local.get()) == Data("notes".utf8))
            // A link to a file reads the file, as URLSession does.
            let link = folder.appendingPathComponent("link.txt")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
            let linked = await session.request(link).serializingData().result
            #expect((try? linked.get()) == Data("notes".utf8))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFIFOIsRefusedRatherThanWaitedOn(transport: TransportKind) async throws {
        try await withFolder { folder in
            let fifo = folder.appendingPathComponent("pipe")
            try #require(mkfifo(fifo.path, 0o600) == 0)
            let session = transport.makeSession()
            let result = await value(within: hangLimit) { await session.request(fifo).serializingData().result }
            #expect(result?.failure?.urlError?.code == .cannotOpenFile)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aServerCannotRedirectToAFile(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/redirect-to?url=file:///etc/hostname"))
            let response = await request.serializingData().response
            // Not followed: the redirect itself is the response, as URLSession delivers one to a
            // scheme it cannot follow.
            #expect(response.response?.statusCode == 302)
            #expect(request.performedRequests.allSatisfy { !($0.url?.isFileURL ?? true) })
            await session.invalidate()
        }
    }
}
