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

    /// TLS spoken to a plain port fails the handshake; that is not an untrusted certificate.
    @Test func aFailedHandshakeIsNotAnUntrustedCertificate() throws {
        let url = try #require(URL(string: "https://127.0.0.1:8080/"))
        let handshake = ErrorMessage.describe(.transportFailed(URLError(.secureConnectionFailed)), url: url)
        #expect(handshake.contains("handshake"))
        #expect(!handshake.contains("not trusted"))
        let untrusted = ErrorMessage.describe(.transportFailed(URLError(.serverCertificateUntrusted)), url: url)
        #expect(untrusted.contains("not trusted"))
    }

    /// Courier's own reasons are kept, and the URL's user info never printed.
    @Test func courierReasonsAreKeptWithoutCredentials() throws {
        let url = try #require(URL(string: "http://alice:s3cret@127.0.0.1:70000/"))
        let message = ErrorMessage.describe(
            .invalidURL(url.absoluteString, reason: "its port is above 65535"),
            url: url
        )
        #expect(message.contains("port is above 65535"))
        #expect(!message.contains("s3cret"))
        let invalid = ErrorMessage.describe(.invalidResponse(reason: "conflicting Content-Length values"), url: url)
        #expect(invalid.contains("not valid HTTP"))
        #expect(invalid.contains("conflicting Content-Length"))
    }

    @Test func defaultPorts() throws {
        #expect(ErrorMessage.endpoint(of: try #require(URL(string: "https://example.org/x"))) == "example.org:443")
        #expect(ErrorMessage.endpoint(of: try #require(URL(string: "http://example.org"))) == "example.org:80")
    }
}
