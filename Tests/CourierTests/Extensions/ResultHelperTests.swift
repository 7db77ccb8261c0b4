import Courier
import CourierTestServer
import Foundation
import Testing

/// Alamofire's `Result` helpers and response typealiases, public in Courier.
@Suite struct ResultHelperTests {
    struct Odd: Error, Equatable {}

    @Test func readsWithoutASwitch() {
        let success: CourierResult<Int> = .success(3)
        let failure: CourierResult<Int> = .failure(.explicitlyCancelled)
        #expect(success.isSuccess && !success.isFailure)
        #expect(failure.isFailure && !failure.isSuccess)
        #expect(success.success == 3 && success.failure == nil)
        #expect(failure.success == nil && failure.failure?.kind == .explicitlyCancelled)
    }

    @Test func tryMapAndTryMapErrorTurnThrownErrorsIntoFailures() {
        let success: Result<Int, Odd> = .success(3)
        #expect(success.tryMap { $0 * 2 }.success == 6)
        #expect(success.tryMap { _ -> Int in throw Odd() }.failure as? Odd == Odd())
        let failure: Result<Int, Odd> = .failure(Odd())
        #expect(failure.tryMap { $0 * 2 }.failure as? Odd == Odd(), "the failure stays")
        #expect(
            failure.tryMapError { _ in CocoaError(.fileNoSuchFile) }.failure as? CocoaError
                == CocoaError(.fileNoSuchFile)
        )
        #expect(
            failure.tryMapError { _ -> CocoaError in throw URLError(.badURL) }.failure as? URLError == URLError(.badURL)
        )
        #expect(success.tryMapError { _ in CocoaError(.fileNoSuchFile) }.success == 3, "a success stays")
    }

    @Test(arguments: TransportKind.allCases)
    func responsesCarryThemToo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let response: CourierDataResponse<Data> = await session.request(server.url("/bytes/4")).serializingData()
                .response
            #expect(response.result.isSuccess && response.result.success?.count == 4)
            let failed: CourierDownloadResponse<URL> = await session.download(server.url("/status/404")).validate()
                .serializingDownloadedFileURL().response
            #expect(failed.result.failure?.responseCode == 404)
            await session.invalidate()
        }
    }
}
