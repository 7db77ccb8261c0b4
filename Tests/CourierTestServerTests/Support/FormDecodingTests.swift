import Testing

@testable import CourierTestServer

@Suite struct FormDecodingTests {
    @Test func decodesURLEncodedPairsInOrder() {
        let pairs = FormDecoding.urlEncodedPairs("a=1&b=x+y&a=%E2%9C%93&flag&&bad=%zz")
        #expect(pairs.map(\.0) == ["a", "b", "a", "flag", "bad"])
        #expect(pairs.map(\.1) == ["1", "x y", "✓", "", "%zz"])
    }

    @Test func readsHeaderParameters() {
        let header = #"multipart/form-data; charset=utf-8; boundary="ab;c""#
        #expect(FormDecoding.headerParameter("boundary", in: header) == "ab;c")
        #expect(FormDecoding.headerParameter("charset", in: header) == "utf-8")
        #expect(FormDecoding.headerParameter("missing", in: header) == nil)
    }

    @Test func splitsMultipartBodies() throws {
        let body = Array(
            ("--XYZ\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n"
                + "--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n\u{0}\u{1}\r\n--XYZ--\r\n").utf8
        )
        let parts = try #require(FormDecoding.multipartParts(body, boundary: "XYZ"))
        #expect(parts.count == 2)
        #expect(parts[0].name == "field" && parts[0].filename == nil && parts[0].content == Array("value".utf8))
        #expect(parts[1].name == "file" && parts[1].filename == "a.bin" && parts[1].content == [0, 1])
        #expect(parts[1].contentType == "application/octet-stream")
    }

    @Test func rejectsTruncatedMultipartBodies() {
        let body = Array("--XYZ\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue".utf8)
        #expect(FormDecoding.multipartParts(body, boundary: "XYZ") == nil)
    }
}
