import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct URLConvertibleTests {
    @Test func stringsWithSchemeAndHostBecomeURLs() throws {
        #expect(try "http://127.0.0.1:8080/get?q=1".asURL().port == 8080)
        #expect(try "https://example.org".asURL().host == "example.org")
    }

    @Test(arguments: ["", "not a url", "ht tp://x", "/relative/path", "http://", "mailto:someone"])
    func othersAreInvalidURLs(text: String) {
        #expect {
            _ = try text.asURL()
        } throws: { error in
            (error as? CourierError)?.kind == .invalidURL && (error as? CourierError)?.invalidURLString == text
        }
    }

    @Test func urlsAndComponentsConvert() throws {
        let url = try #require(URL(string: "https://example.org/a"))
        #expect(try url.asURL() == url)
        var components = URLComponents()
        components.scheme = "https"
        components.host = "example.org"
        components.path = "/b"
        #expect(try components.asURL().absoluteString == "https://example.org/b")
    }

    @Test func urlRequestsConvertToThemselves() throws {
        let request = URLRequest(url: try #require(URL(string: "https://example.org")))
        #expect(try request.asURLRequest() == request)
        #expect(request.urlRequest == request)
    }
}
