import Testing

@testable import courier

@Suite struct RequestTargetTests {
    @Test(
        arguments: [
            (":8080/get", "http://localhost:8080/get"),
            (":8080", "http://localhost:8080"),
            (":/get", "http://localhost/get"),
            ("example.org/x", "http://example.org/x"),
            ("https://example.org/x?a=1", "https://example.org/x?a=1"),
            ("127.0.0.1:9/get", "http://127.0.0.1:9/get"),
            (
                ":8080/redirect-to?url=http://example.org/x",
                "http://localhost:8080/redirect-to?url=http://example.org/x"
            ),
            ("example.org/a?next=https://b.example/c", "http://example.org/a?next=https://b.example/c"),
            ("HTTPS://example.org/", "HTTPS://example.org/"),
        ]
    )
    func expandsShorthand(text: String, expected: String) throws {
        #expect(try RequestTarget.url(from: text).absoluteString == expected)
    }

    @Test func appendsEncodedQueryItems() throws {
        let url = try RequestTarget.url(from: ":1/get?x=1", query: [("q", "a b&c=d+e"), ("é", "1")])
        #expect(url.absoluteString == "http://localhost:1/get?x=1&q=a%20b%26c%3Dd%2Be&%C3%A9=1")
    }

    @Test(arguments: ["ftp://example.org", "http://", "http:///x"])
    func rejectsNonHTTP(text: String) {
        #expect(throws: RequestItemError.self) { try RequestTarget.url(from: text) }
    }

    @Test(arguments: [
        ("http://x", true), ("svn+ssh://x", true), ("localhost:8080/a?u=http://b", false), ("1http://x", false),
        ("/a?u=http://b", false), ("://x", false), ("a b://x", false),
    ])
    func recognisesASchemeOnlyAtTheStart(text: String, expected: Bool) {
        #expect(RequestTarget.hasScheme(text) == expected)
    }
}
