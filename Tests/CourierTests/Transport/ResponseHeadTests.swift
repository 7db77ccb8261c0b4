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

    /// A hostile head: 50,000 `Set-Cookie` fields and 50,000 distinct names. Reading every
    /// header is linear (seconds at most in a loaded debug build); the code this replaced
    /// would take about an hour.
    @Test func aHugeHeadIsReadInLinearTime() async throws {
        let url = try #require(Self.url)
        let count = 20_000
        var fields: [(name: String, value: String)] = []
        for number in 0..<count {
            fields.append(("Set-Cookie", "c\(number)=v"))
            fields.append(("X-Distinct-\(number)", "\(number)"))
        }
        let (read, elapsed) = try await offThePool { [fields] in
            let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)
            let headers = head.headers
            var found = 0
            for number in 0..<count where head.value(forHTTPHeaderField: "x-distinct-\(number)") == "\(number)" {
                found += 1
            }
            return (
                count: headers.count, cookies: headers["set-cookie"],
                lookedUp: head.value(forHTTPHeaderField: "SET-COOKIE"), found: found,
                dictionaryCount: headers.dictionary.count
            )
        }
        #expect(read.count == count + 1)
        let cookies = try #require(read.cookies)
        #expect(cookies.hasPrefix("c0=v, c1=v, ") && cookies.hasSuffix(", c\(count - 1)=v"))
        #expect(read.lookedUp == cookies)
        #expect(read.found == count)
        #expect(read.dictionaryCount == count + 1)
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test func aLargeHeadReadsAsASmallOneDoes() throws {
        let url = try #require(Self.url)
        // Past the size at which lookups go through the index, with repeats and mixed case.
        var fields: [(name: String, value: String)] = [("Vary", "Accept"), ("Set-Cookie", "a=1")]
        fields += (0..<40).map { ("X-Filler-\($0)", "\($0)") }
        fields += [("vary", "Origin"), ("SET-COOKIE", "b=2"), ("Content-Type", "text/plain; charset=utf-8")]
        let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)
        #expect(head.value(forHTTPHeaderField: "VARY") == "Accept, Origin")
        #expect(head.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2")
        #expect(head.value(forHTTPHeaderField: "Vary ") == nil)
        #expect(head.value(forHTTPHeaderField: "missing") == nil)
        #expect(head.mimeType == "text/plain" && head.textEncodingName == "utf-8")
        let headers = head.headers
        #expect(headers.count == 43)
        #expect(headers.map(\.name).prefix(2) == ["vary", "SET-COOKIE"], "in first-seen order, named as last seen")
        #expect(headers["Vary"] == "Accept, Origin" && headers["x-filler-39"] == "39")
        let built = try #require(head.httpURLResponse)
        #expect(built.value(forHTTPHeaderField: "Vary") == "Accept, Origin")
        #expect(built.value(forHTTPHeaderField: "Set-Cookie") == "a=1, b=2")
        #expect(built.allHeaderFields.count == 43)
    }
}
