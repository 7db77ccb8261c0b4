import Courier
import Foundation
import Testing

@testable import courier

@Suite struct ErrorMessageTests {
    @Test func namesTheEndpointAndCause() throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/get"))
        #expect(
            ErrorMessage.describe(.transportFailed(URLError(.cannotConnectToHost)), url: url)
                == "could not connect to 127.0.0.1:9 (connection refused)"
        )
        #expect(
            ErrorMessage.describe(.transportFailed(URLError(.timedOut)), url: url, timeout: 2)
                == "request to 127.0.0.1:9 timed out after 2s"
        )
        #expect(
            ErrorMessage.describe(.transportFailed(URLError(.cannotFindHost)), url: URL(fileURLWithPath: "/"))
                .hasPrefix("could not resolve host")
        )
    }

    @Test func defaultPorts() throws {
        #expect(ErrorMessage.endpoint(of: try #require(URL(string: "https://example.org/x"))) == "example.org:443")
        #expect(ErrorMessage.endpoint(of: try #require(URL(string: "http://example.org"))) == "example.org:80")
    }
}
