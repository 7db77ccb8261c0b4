import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct URLRequestCourierTests {
    private func request(with fields: [String: String]) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1/get")))
        request.allHTTPHeaderFields = fields
        return request
    }

    @Test func keepsHeadersTheRequestHasWhenNotReplacing() throws {
        var request = try request(with: ["user-agent": "mine/1.0"])
        request.addHeaders(["User-Agent": "Courier", "Accept-Language": "en"], replacing: false)
        #expect(request.allHTTPHeaderFields == ["user-agent": "mine/1.0", "Accept-Language": "en"])
        #expect(request.value(forHTTPHeaderField: "User-Agent") == "mine/1.0")
    }

    @Test func replacesHeadersOfTheSameNameInAnyCase() throws {
        var request = try request(with: ["accept": "text/plain", "X-Kept": "1"])
        request.addHeaders(["Accept": "application/json", "X-New": "2"], replacing: true)
        #expect(request.allHTTPHeaderFields == ["Accept": "application/json", "X-Kept": "1", "X-New": "2"])
    }

    @Test func theLastOfTwoHeadersWithOneNameWins() throws {
        var request = try request(with: [:])
        var headers = HTTPHeaders()
        headers.add(name: "X-One", value: "a")
        request.addHeaders(headers, replacing: true)
        request.addHeaders(["x-one": "b"], replacing: true)
        #expect(request.allHTTPHeaderFields == ["x-one": "b"])
        request.addHeaders([], replacing: true)
        #expect(request.allHTTPHeaderFields == ["x-one": "b"])
    }
}
