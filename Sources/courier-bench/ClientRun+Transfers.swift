import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ClientRun {
    // MARK: - Download

    func download(to destination: URL, _ connections: Connections) async throws -> Int64 {
        switch client {
        case .rawAsyncHTTPClient:
            let request = try HTTPClient.Request(url: bodyURL)
            let delegate = try FileDownloadDelegate(path: destination.path)
            _ = try await HTTPClient.shared.execute(request: request, delegate: delegate).get()
        case .rawURLSession:
            guard let urlSession = connections.urlSession else { throw BenchError("no URLSession") }
            let (temporary, response) = try await urlSession.download(from: bodyURL)
            try Self.checkStatus((response as? HTTPURLResponse)?.statusCode ?? 0, of: bodyURL)
            try FileManager.default.moveItem(at: temporary, to: destination)
        case .courierAsyncHTTPClient, .courierURLSession, .observedCourierAsyncHTTPClient:
            guard let session = connections.session else { throw BenchError("no Courier session") }
            _ = try await session.download(bodyURL, to: { _, _ in (destination, []) }).validate()
                .serializingDownloadedFileURL().value
        }
        // FileDownloadDelegate writes whatever status comes: the size check catches an error page.
        return try checkTransferred(try Self.size(of: destination))
    }

    // MARK: - Upload

    func upload(_ file: URL, _ connections: Connections) async throws -> Int64 {
        switch client {
        case .rawAsyncHTTPClient:
            return try await rawAsyncHTTPClientUpload(file, contentType: "application/octet-stream")
        case .rawURLSession:
            return try await rawURLSessionUpload(file, contentType: "application/octet-stream", connections)
        case .courierAsyncHTTPClient, .courierURLSession, .observedCourierAsyncHTTPClient:
            guard let session = connections.session else { throw BenchError("no Courier session") }
            return try await uploadedBytes(
                session.upload(file, to: uploadURL, method: Courier.HTTPMethod(rawValue: layout.uploadMethod))
                    .validate()
            )
        }
    }

    func uploadMultipart(_ file: URL, _ connections: Connections) async throws -> Int64 {
        switch client {
        case .rawAsyncHTTPClient, .rawURLSession:
            // No multipart in the raw clients: the body is written by hand, as their users do.
            let boundary = "bench.boundary.0123456789abcdef"
            let body = folder.appendingPathComponent("multipart.body")
            try Self.writeMultipartBody(at: body, file: file, boundary: boundary)
            let contentType = "multipart/form-data; boundary=\(boundary)"
            return client == .rawAsyncHTTPClient
                ? try await rawAsyncHTTPClientUpload(body, contentType: contentType)
                : try await rawURLSessionUpload(body, contentType: contentType, connections)
        case .courierAsyncHTTPClient, .courierURLSession, .observedCourierAsyncHTTPClient:
            guard let session = connections.session else { throw BenchError("no Courier session") }
            let request = session.upload(
                multipartFormData: { $0.append(file, withName: "file") },
                to: uploadURL,
                method: Courier.HTTPMethod(rawValue: layout.uploadMethod)
            )
            return try await uploadedBytes(request.validate())
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
        var request = try HTTPClient.Request(url: uploadURL, method: NIOHTTP1.HTTPMethod(rawValue: layout.uploadMethod))
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
        try Self.checkStatus(Int(response.status.code), of: uploadURL)
        guard layout.answersUploadWithReceipt else { return size }
        let receipt = try JSONDecoder().decode(
            Receipt.self,
            from: response.body.map { Data($0.readableBytesView) } ?? Data()
        )
        return receipt.bytes
    }

    private func rawURLSessionUpload(_ file: URL, contentType: String, _ connections: Connections) async throws -> Int64
    {
        guard let urlSession = connections.urlSession else { throw BenchError("no URLSession") }
        var request = URLRequest(url: uploadURL)
        request.httpMethod = layout.uploadMethod
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        let (data, response) = try await urlSession.upload(for: request, fromFile: file)
        try Self.checkStatus((response as? HTTPURLResponse)?.statusCode ?? 0, of: uploadURL)
        guard layout.answersUploadWithReceipt else { return size }
        return try JSONDecoder().decode(Receipt.self, from: data).bytes
    }

    /// The bytes the server says it read (the test server's receipt), or, from a server that
    /// answers a `PUT` with 201 or 204 and no body, the size of the file part: the receipt
    /// counts a multipart body's framing too, about 200 bytes more, which no rate shows.
    private func uploadedBytes(_ request: UploadRequest) async throws -> Int64 {
        guard layout.answersUploadWithReceipt else {
            _ = try await request.serializingData(emptyResponseCodes: [201, 204]).value
            return size
        }
        return try await request.serializingDecodable(Receipt.self).value.bytes
    }

    /// Throws unless `status` is a success.
    static func checkStatus(_ status: Int, of url: URL) throws {
        guard (200..<300).contains(status) else { throw BenchError("\(url.path) answered \(status)") }
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

    // MARK: - Stream

    /// Reads a body of ``size`` bytes piece by piece as it arrives, keeping none; returns the bytes counted.
    func stream(_ connections: Connections) async throws -> Int64 {
        var bytes: Int64 = 0
        switch client {
        case .rawAsyncHTTPClient:
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: bodyURL.absoluteString),
                timeout: .seconds(300)
            )
            guard response.status == .ok else { throw BenchError("\(bodyURL.path) answered \(response.status.code)") }
            for try await buffer in response.body { bytes += Int64(buffer.readableBytes) }
        case .rawURLSession:
            // FoundationNetworking has no `bytes(for:)`: a session delegate gets the pieces.
            bytes = try await ByteCounter.count(bodyURL, configuration: URLSessionTransport.defaultConfiguration())
        case .courierAsyncHTTPClient, .courierURLSession, .observedCourierAsyncHTTPClient:
            guard let session = connections.session else { throw BenchError("no Courier session") }
            for try await piece in session.streamRequest(bodyURL).validate().streamingData() {
                bytes += Int64(piece.count)
            }
        }
        return try checkTransferred(bytes)
    }
}
