import CourierTestServer
import Foundation
import Testing

/// `courier` against servers that answer with what should crash or mislead a client: it exits 1
/// with one line saying why, and prints no secret.
@Suite struct HostileServerCommandTests {
    /// A redirect to a port above 65535 killed the process (SIGILL) over AsyncHTTPClient.
    @Test(arguments: ["nio", "urlsession"])
    func aRedirectToAPortAbove65535IsRefused(transport: String) async throws {
        try await TestServer.withRunningServer { server in
            var components = URLComponents(url: server.url("/redirect-to"), resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: "url", value: "http://127.0.0.1:65536/")]
            let url = try #require(components?.url).absoluteString
            let run = try await CourierRun.run(["--transport", transport, "--follow", url])
            #expect(run.status == 1, "\(run.errorOutput)")
            #expect(run.errorOutput.contains("port is above 65535"), "\(run.errorOutput)")
        }
    }

    @Test(arguments: ["nio", "urlsession"])
    func aURLWithAnImpossiblePortFailsWithoutPrintingItsPassword(transport: String) async throws {
        let run = try await CourierRun.run(["--transport", transport, "http://ada:s3cret@127.0.0.1:70000/get"])
        #expect(run.status == 1, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("port is above 65535"), "\(run.errorOutput)")
        #expect(!run.errorOutput.contains("s3cret"))
    }

    @Test(arguments: ["nio", "urlsession"])
    func conflictingContentLengthsAreNotValidHTTP(transport: String) async throws {
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"
        try await RawResponseServer.withRunningServer(response: response) { server in
            let run = try await CourierRun.run(["--transport", transport, server.url("/").absoluteString])
            #expect(run.status == 1, "\(run.errorOutput)")
            #expect(run.errorOutput.contains("not valid HTTP"), "\(run.errorOutput)")
        }
    }
}
