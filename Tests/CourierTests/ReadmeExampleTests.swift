import Courier
import CourierNIO
import CourierTestServer
import Foundation
import Testing

/// The README's "Using Courier" example, verbatim but for the server's address, so it stays true.
@Suite struct ReadmeExampleTests {
    struct Echo: Decodable, Sendable {
        let args: [String: String]
        let url: String
    }

    @Test(arguments: [false, true])
    func usingCourierExampleWorks(overAsyncHTTPClient: Bool) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString  // README: http://127.0.0.1:8080
            let session = overAsyncHTTPClient ? Session() : Session(transport: .urlSession)

            let echo = try await session.request("\(base)/get", parameters: ["q": "swift"])
                .validate()
                .serializingDecodable(Echo.self).value
            #expect(echo.args == ["q": "swift"])

            let code: Int? = await withCheckedContinuation { continuation in
                session.request("\(base)/status/503")
                    .validate(statusCode: 200..<300)
                    .responseDecodable(of: Echo.self) { response in
                        continuation.resume(returning: response.error?.responseCode)
                    }
            }
            #expect(code == 503)
        }
    }
}
