import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Smaller pieces of Alamofire's surface: responses' `debugDescription`, progress handlers as
/// properties, `Downloadable`, `JSONParameterEncoder.encoder`, the form encoder's `Data` form,
/// a stream's `validate(_:)` and `responseStreamDecodable(preprocessor:)`.
@Suite struct AlamofireSurfaceTests {
    struct Line: Decodable, Sendable {
        var id: Int
    }

    @Test(arguments: TransportKind.allCases)
    func debugDescriptionsShowRequestResponseAndResultWithoutCredentials(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let response = await session.request(
                server.url("/get"),
                headers: [.authorization(bearerToken: "secret-token"), .init(name: "X-Mine", value: "1")]
            ).serializingData().response
            let text = response.debugDescription
            #expect(text.hasPrefix("[Request]: GET \(server.url("/get").absoluteString)"))
            #expect(text.contains("        X-Mine: 1"))
            #expect(text.contains("Authorization: ***"))
            // The request's headers are redacted (the body is the server's: httpbin echoes them).
            let requestPart = text.components(separatedBy: "[Response]").first ?? ""
            #expect(!requestPart.contains("secret-token"))
            #expect(text.contains("    [Status Code]: 200"))
            #expect(text.contains("[Network Duration]: "))
            #expect(text.contains("[Result]: success("))

            let download = await session.download(server.url("/bytes/10")).serializingDownloadedFileURL().response
            #expect(download.debugDescription.contains("File: \(download.fileURL?.path ?? "?")"))
            await session.invalidate()
        }
    }

    @Test func aLongBodyIsCutInTheDescription() {
        let body = Data(String(repeating: "a", count: 10_000).utf8)
        let text = ResponseDebugDescription.text(of: body)
        #expect(text.count < 2_200)
        #expect(text.hasSuffix("(10000 bytes in all)"))
        #expect(ResponseDebugDescription.text(of: Data([0xFF, 0xFE])) == "2 bytes")
    }

    @Test func progressHandlersReadBackAsInAlamofire() throws {
        let session = Session(transport: URLSessionTransport())
        let request = session.request("http://127.0.0.1:9/", shouldAutomaticallyResume: false)
        #expect(request.uploadProgressHandler == nil)
        let queue = DispatchQueue(label: "progress")
        request.uploadProgress(queue: queue) { _ in }
        request.downloadProgress(queue: queue) { _ in }
        #expect(request.uploadProgressHandler?.queue === queue)
        #expect(request.downloadProgressHandler?.queue === queue)
        request.cancel()
        let download = session.download("http://127.0.0.1:9/", shouldAutomaticallyResume: false)
        guard case .request = download.downloadable else {
            Issue.record("a download says it was made from a request")
            return
        }
        download.cancel()
    }

    @Test func encodersShowWhatTheyUse() throws {
        let json = JSONEncoder()
        #expect(JSONParameterEncoder(encoder: json).encoder === json)
        #expect(JSONParameterEncoder.prettyPrinted.encoder.outputFormatting.contains(.prettyPrinted))
        let form = URLEncodedFormEncoder()
        let text = try form.encode(["a": "b c"])
        let bytes: Data = try form.encode(["a": "b c"])
        #expect(text == "a=b%20c")
        #expect(bytes == Data(text.utf8))
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamValidatorRejectsTheHeadBeforeAnyPiece(transport: TransportKind) async throws {
        struct Refused: Error {}
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let pieces = TestLock(0)
            let request = session.streamRequest(server.url("/stream/3"))
                .validate { _, response in response.statusCode == 200 ? .failure(Refused()) : .success(()) }
            let ended = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<CourierError?, Never>) in
                    request.responseStream { stream in
                        switch stream.event {
                        case .stream: pieces.withLock { $0 += 1 }
                        case .complete(let completion): continuation.resume(returning: completion.error)
                        }
                    }
                }
            }
            let error = try #require(ended ?? nil)
            #expect(error.kind == .responseValidationFailed)
            #expect(error.underlyingError is Refused)
            #expect(pieces.withLock { $0 } == 0)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func responseStreamDecodablePreprocessesEachLine(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let decoded = TestLock<[Int]>([])
            // One JSON line behind an XSSI-style prefix, which the preprocessor drops.
            let line = Data(")]}',{\"id\":7}\n".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let ended = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<CourierError?, Never>) in
                    session.streamRequest(server.url("/base64/\(line)")).responseStreamDecodable(
                        of: Line.self,
                        preprocessor: StripPrefix()
                    ) { stream in
                        switch stream.event {
                        case .stream(let result):
                            if let value = try? result.get() { decoded.withLock { $0.append(value.id) } }
                        case .complete(let completion): continuation.resume(returning: completion.error)
                        }
                    }
                }
            }
            #expect(ended.map { $0 == nil } == true)
            #expect(decoded.withLock { $0 } == [7])
            await session.invalidate()
        }
    }

    /// Drops a leading `)]}',` from a line.
    struct StripPrefix: DataPreprocessor {
        func preprocess(_ data: Data) throws -> Data {
            let prefix = Data(")]}',".utf8)
            return data.starts(with: prefix) ? data.dropFirst(prefix.count) : data
        }
    }
}
