import Courier
import CourierTestServer
import Foundation
import Testing

/// Alamofire's `map`, `tryMap`, `mapError` and `tryMapError` on data and download responses.
@Suite struct ResponseTransformTests {
    private struct Rejected: Error, Equatable {
        let reason: String
    }

    @Test(arguments: TransportKind.allCases)
    func dataResponsesTransformTheirResultAndKeepTheRest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let response = await session.request(server.url("/get?q=swift")).serializingDecodable(Echo.self).response
            let query = response.map { $0.args["q"] }
            #expect(query.value == "swift")
            #expect(query.head?.statusCode == 200 && query.data == response.data)
            #expect(query.metrics?.statusCode == 200 && query.request?.url == response.request?.url)

            let failed = response.tryMap { _ -> Int in throw Rejected(reason: "no") }
            #expect(failed.error as? Rejected == Rejected(reason: "no"))
            #expect(failed.head?.statusCode == 200)

            let missing = await session.request(server.url("/status/404")).validate().serializingData().response
            let code = missing.mapError {
                $0.responseCode ?? 0 == 404 ? Rejected(reason: "gone") : Rejected(reason: "?")
            }
            #expect(code.error == Rejected(reason: "gone"))
            let rethrown = missing.tryMapError { _ -> Rejected in throw Rejected(reason: "thrown") }
            #expect(rethrown.error as? Rejected == Rejected(reason: "thrown"))
            // A success passes the error transforms by, and a failure the value ones.
            #expect(response.mapError { _ in Rejected(reason: "unused") }.value?.args == ["q": "swift"])
            #expect(missing.map { $0.count }.error?.responseCode == 404)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadResponsesTransformTheirResultAndKeepTheFile(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let response = await session.download(server.url("/bytes/64")).serializingDownloadedFileURL().response
            defer { response.fileURL.map { try? FileManager.default.removeItem(at: $0) } }
            let size = response.tryMap { url in try Data(contentsOf: url).count }
            #expect(size.value == 64)
            #expect(size.fileURL == response.fileURL && size.head?.statusCode == 200)
            #expect(response.map(\.lastPathComponent).value == response.fileURL?.lastPathComponent)
            let relabelled = response.mapError { _ in Rejected(reason: "unused") }
            #expect(relabelled.value == response.value)
            let failed = await session.download(server.url("/status/500")).validate().serializingDownloadedFileURL()
                .response
            defer { failed.fileURL.map { try? FileManager.default.removeItem(at: $0) } }
            #expect(failed.mapError { _ in Rejected(reason: "server") }.error == Rejected(reason: "server"))
            #expect(
                failed.tryMapError { _ -> Rejected in throw Rejected(reason: "x") }.error as? Rejected
                    == Rejected(reason: "x")
            )
            await session.invalidate()
        }
    }
}
