import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct ResponseHeadTests {
    private static let url = URL(string: "http://127.0.0.1:8080/get")

    /// Header sets whose reading must agree with Foundation's `HTTPURLResponse`.
    static let fieldSets: [[(name: String, value: String)]] = [
        [("Content-Type", "application/json"), ("Content-Length", "42")],
        [("content-type", "text/html; charset=ISO-8859-1"), ("etag", "\"abc\"")],
        [("Content-Type", "text/plain;charset=\"UTF-8\""), ("X-Custom", "1")],
        [("Content-Type", "application/json"), ("content-length", "0")],
        [("Server", "courier"), ("Date", "Sun, 22 Nov 2026 07:00:00 GMT")],
        [("Content-Length", "not a number"), ("WWW-Authenticate", "Basic realm=\"x\"")],
    ]

    @Test(arguments: fieldSets.indices)
    func readsAsFoundationDoes(index: Int) throws {
        let url = try #require(Self.url)
        let fields = Self.fieldSets[index]
        let head = ResponseHead(url: url, statusCode: 201, httpVersion: "HTTP/1.1", headerFields: fields)
        let foundation = try #require(
            HTTPURLResponse(
                url: url,
                statusCode: 201,
                httpVersion: "HTTP/1.1",
                headerFields: Dictionary(fields, uniquingKeysWith: { $1 })
            )
        )
        #expect(head.statusCode == 201)
        #expect(head.url == url)
        #expect(head.mimeType == foundation.mimeType)
        #expect(head.textEncodingName == foundation.textEncodingName)
        #expect(head.expectedContentLength == foundation.expectedContentLength)
        for name in ["content-type", "CONTENT-LENGTH", "ETag", "x-custom", "missing"] {
            #expect(head.value(forHTTPHeaderField: name) == foundation.value(forHTTPHeaderField: name), "\(name)")
        }
        let built = try #require(head.httpURLResponse)
        #expect(built.statusCode == 201)
        #expect(built.allHeaderFields.count == foundation.allHeaderFields.count)
        #expect(head.httpURLResponse === built, "built once, then kept")
    }

    @Test func joinsRepeatedFieldsAsHTTPAllows() throws {
        let url = try #require(Self.url)
        let head = ResponseHead(
            url: url,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: [("Vary", "Accept"), ("Set-Cookie", "a=1"), ("vary", "Origin")]
        )
        #expect(head.value(forHTTPHeaderField: "VARY") == "Accept, Origin")
        #expect(head.headers.value(for: "Vary") == "Accept, Origin")
        #expect(head.headers.count == 2)
        #expect(head.httpURLResponse?.value(forHTTPHeaderField: "Vary") == "Accept, Origin")
        // Names differing only past ASCII letters do not match.
        #expect(head.value(forHTTPHeaderField: "Vary ") == nil)
        #expect(head.value(forHTTPHeaderField: "Var") == nil)
    }

    /// Where FoundationNetworking keeps the spaces around the type and misses a capitalised
    /// `Charset`, the head reads as RFC 9110 says (parameter names are case-insensitive), and
    /// alike on both transports.
    @Test func readsContentTypeAsTheRFCSays() throws {
        let url = try #require(Self.url)
        let head = ResponseHead(
            url: url,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: [("Content-Type", " Application/JSON ; Charset = \"UTF-8\" ")]
        )
        #expect(head.mimeType == "application/json")
        #expect(head.textEncodingName == "utf-8")
        let wrapped = ResponseHead(try #require(head.httpURLResponse))
        #expect(wrapped.mimeType == "application/json")
        #expect(wrapped.textEncodingName == "utf-8")
    }

    @Test func wrapsAResponseWithoutRebuildingIt() throws {
        let url = try #require(Self.url)
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 404, httpVersion: nil, headerFields: ["Content-Type": "text/plain"])
        )
        let head = ResponseHead(response)
        #expect(head.httpURLResponse === response)
        #expect(head.statusCode == 404)
        #expect(head.mimeType == "text/plain")
        #expect(head.headers.value(for: "content-type") == "text/plain")
    }
}
