import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download retried because its serializer failed starts over cleanly, on the stub transport,
/// where an attempt can fail before its head arrives.
@Suite struct DownloadSerializerRetryTests {
    /// Accepts only the body "valid".
    private struct OnlyValid: ResponseSerializer {
        struct Rejected: Error {}
        func serialize(
            request: URLRequest?,
            response: HTTPURLResponse?,
            data: Data?,
            error: CourierError?
        ) throws
            -> String
        {
            if let error { throw error }
            let text = String(decoding: data ?? Data(), as: UTF8.self)
            guard text == "valid" else { throw Rejected() }
            return text
        }
    }

    /// A complete body the serializer rejects, from a server that takes ranges.
    private static let rejected = StubResponse.status(
        200,
        headers: ["ETag": "\"v1\"", "Accept-Ranges": "bytes", "Content-Length": "9"],
        body: Data("not-valid".utf8)
    )

    /// `folder/file`, made with its folder, replacing what is there when `replacing`.
    private static func destination(in folder: URL, replacing: Bool) -> DownloadRequest.Destination {
        let file = folder.appendingPathComponent("file")
        let options: DownloadRequest.Options =
            replacing ? [.createIntermediateDirectories, .removePreviousFile] : [.createIntermediateDirectories]
        return { _, _ in (file, options) }
    }

    private func response(of request: DownloadRequest) async -> DownloadResponse<String, CourierError>? {
        await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                request.response(responseSerializer: OnlyValid()) { continuation.resume(returning: $0) }
            }
        }
    }

    @Test(arguments: [true, false])
    func anAttemptFailingAfterTheRetryResumesNothingOfTheRejectedBody(toADestination: Bool) async throws {
        let transport = StubTransport([
            Self.rejected,
            .failure(URLError(.networkConnectionLost)),
            .status(200, headers: ["ETag": "\"v1\""], body: Data("valid".utf8)),
        ])
        let session = Session(
            transport: transport,
            interceptor: Retrier { request, _, _ in request.retryCount < 3 ? .retry : .doNotRetry }
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = toADestination ? Self.destination(in: folder, replacing: true) : nil
        let request = session.download("https://example.com/file", to: destination)
        let handled = try #require(await response(of: request))
        #expect(handled.value == "valid", "\(handled)")
        let ranges = transport.requests.map { $0.value(forHTTPHeaderField: "Range") }
        #expect(ranges == [nil, nil, nil], "no attempt continues the rejected body: \(ranges)")
        let file = try #require(handled.fileURL)
        #expect(try Data(contentsOf: file) == Data("valid".utf8))
        try? FileManager.default.removeItem(at: file)
        await session.invalidate()
    }

    @Test(arguments: [true, false])
    func aFailureAfterTheRetryLeavesNoResumeDataForTheRejectedBody(toADestination: Bool) async throws {
        let transport = StubTransport([Self.rejected, .failure(URLError(.networkConnectionLost))])
        let session = Session(
            transport: transport,
            interceptor: Retrier { request, _, _ in request.retryCount < 1 ? .retry : .doNotRetry }
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = toADestination ? Self.destination(in: folder, replacing: false) : nil
        let request = session.download("https://example.com/file", to: destination)
        let handled = try #require(await response(of: request))
        #expect(handled.error?.kind == .transportFailed, "\(handled)")
        #expect(handled.fileURL == nil)
        #expect(handled.resumeData == nil, "nothing of the rejected body is worth resuming")
        #expect(!FileManager.default.fileExists(atPath: request.temporaryURL.path))
        await session.invalidate()
    }
}
