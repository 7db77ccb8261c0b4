import AsyncHTTPClient
import Courier
import CourierNIO
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One workload run by one client, in a child process of its own so its peak memory is its own.
struct ClientRun {
    let client: Client
    let workload: Workload
    let server: URL
    let size: Int64
    /// A folder of this run's files, removed afterwards.
    let folder: URL

    /// Runs the workload once and measures it.
    func measure() async throws -> Measurement {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("source.bin")
        if workload != .download { try Self.writeFile(at: source, size: size) }
        let cpuBefore = ProcessUsage.cpuSeconds()
        let start = ContinuousClock.now
        let bytes: Int64
        switch workload {
        case .download: bytes = try await download(to: folder.appendingPathComponent("downloaded.bin"))
        case .upload: bytes = try await upload(source)
        case .multipart: bytes = try await uploadMultipart(source)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Measurement(
            client: client,
            workload: workload,
            bytes: bytes,
            seconds: seconds,
            cpuSeconds: ProcessUsage.cpuSeconds() - cpuBefore,
            peakResidentBytes: ProcessUsage.peakResidentBytes()
        )
    }

    /// A file of `size` bytes, written in 1 MiB pieces.
    static func writeFile(at url: URL, size: Int64) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var left = size
        while left > 0 {
            let count = Int(min(Int64(piece.count), left))
            try handle.write(contentsOf: piece.prefix(count))
            left -= Int64(count)
        }
    }

    private var downloadURL: URL {
        server.appendingPathComponent("range/\(size)").appending(queryItems: [
            URLQueryItem(name: "chunk_size", value: "1048576")
        ])
    }

    private var uploadURL: URL {
        server.appendingPathComponent("upload").appending(queryItems: [URLQueryItem(name: "hash", value: "false")])
    }

    // MARK: - Download

    private func download(to destination: URL) async throws -> Int64 {
        switch client {
        case .rawAsyncHTTPClient:
            let request = try HTTPClient.Request(url: downloadURL)
            let delegate = try FileDownloadDelegate(path: destination.path)
            _ = try await HTTPClient.shared.execute(request: request, delegate: delegate).get()
        case .rawURLSession:
            let (temporary, _) = try await rawURLSession.download(from: downloadURL)
            try FileManager.default.moveItem(at: temporary, to: destination)
        case .courierAsyncHTTPClient, .courierURLSession:
            let session = makeSession()
            _ = try await session.download(downloadURL, to: { _, _ in (destination, []) }).validate()
                .serializingDownloadedFileURL().value
            await session.invalidate()
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }

    // MARK: - Upload

    private func upload(_ file: URL) async throws -> Int64 {
        switch client {
        case .rawAsyncHTTPClient:
            return try await rawAsyncHTTPClientUpload(file, contentType: "application/octet-stream")
        case .rawURLSession:
            return try await rawURLSessionUpload(file, contentType: "application/octet-stream")
        case .courierAsyncHTTPClient, .courierURLSession:
            let session = makeSession()
            let receipt = try await session.upload(file, to: uploadURL).validate()
                .serializingDecodable(Receipt.self).value
            await session.invalidate()
            return receipt.bytes
        }
    }

    private func uploadMultipart(_ file: URL) async throws -> Int64 {
        switch client {
        case .rawAsyncHTTPClient, .rawURLSession:
            // No multipart in the raw clients: the body is written by hand, as their users do.
            let boundary = "bench.boundary.0123456789abcdef"
            let body = folder.appendingPathComponent("multipart.body")
            try Self.writeMultipartBody(at: body, file: file, boundary: boundary)
            let contentType = "multipart/form-data; boundary=\(boundary)"
            return client == .rawAsyncHTTPClient
                ? try await rawAsyncHTTPClientUpload(body, contentType: contentType)
                : try await rawURLSessionUpload(body, contentType: contentType)
        case .courierAsyncHTTPClient, .courierURLSession:
            let session = makeSession()
            let receipt = try await session.upload(
                multipartFormData: { $0.append(file, withName: "file") },
                to: uploadURL
            ).validate().serializingDecodable(Receipt.self).value
            await session.invalidate()
            return receipt.bytes
        }
    }

    private func rawAsyncHTTPClientUpload(_ file: URL, contentType: String) async throws -> Int64 {
        let size = try Self.size(of: file)
        let fileIO = NonBlockingFileIO(threadPool: .singleton)
        let (handle, _) = try await fileIO.openFile(
            _deprecatedPath: file.path,
            eventLoop: HTTPClient.shared.eventLoopGroup.any()
        ).get()
        defer { try? handle.close() }
        var request = try HTTPClient.Request(url: uploadURL, method: .POST)
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .stream(contentLength: size) { writer in
            fileIO.readChunked(
                fileHandle: handle,
                byteCount: Int(size),
                chunkSize: 128 * 1024,
                allocator: ByteBufferAllocator(),
                eventLoop: HTTPClient.shared.eventLoopGroup.any()
            ) { writer.write(.byteBuffer($0)) }
        }
        let response = try await HTTPClient.shared.execute(request: request).get()
        let receipt = try JSONDecoder().decode(
            Receipt.self,
            from: response.body.map { Data($0.readableBytesView) } ?? Data()
        )
        return receipt.bytes
    }

    private func rawURLSessionUpload(_ file: URL, contentType: String) async throws -> Int64 {
        var request = URLRequest(url: uploadURL)
        request.httpMethod = "POST"
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        let (data, _) = try await rawURLSession.upload(for: request, fromFile: file)
        return try JSONDecoder().decode(Receipt.self, from: data).bytes
    }

    /// `file` as the one part of a multipart body, written in 1 MiB pieces.
    static func writeMultipartBody(at url: URL, file: URL, boundary: String) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let output = try FileHandle(forWritingTo: url)
        defer { try? output.close() }
        let head =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(file.lastPathComponent)\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        try output.write(contentsOf: Data(head.utf8))
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        while let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty {
            try output.write(contentsOf: piece)
        }
        try output.write(contentsOf: Data("\r\n--\(boundary)--\r\n".utf8))
    }

    static func size(of file: URL) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// A plain URLSession, configured as Courier's transport configures its own (no cache, no cookies).
    private var rawURLSession: URLSession { URLSession(configuration: URLSessionTransport.defaultConfiguration()) }

    private func makeSession() -> Session {
        Session(transport: client == .courierAsyncHTTPClient ? AsyncHTTPClientTransport.shared : URLSessionTransport())
    }

    /// What `/upload` answers.
    struct Receipt: Decodable {
        let bytes: Int64
    }
}
