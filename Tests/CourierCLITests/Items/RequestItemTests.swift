import Testing

@testable import courier

@Suite struct RequestItemTests {
    @Test(
        arguments: [
            ("X-Token:abc", RequestItem.header(name: "X-Token", value: "abc")),
            ("X-Empty:", .header(name: "X-Empty", value: "")),
            ("Accept:a:b", .header(name: "Accept", value: "a:b")),
            ("q==swift", .query(name: "q", value: "swift")),
            ("q==a=b", .query(name: "q", value: "a=b")),
            ("name=Ada", .field(name: "name", value: "Ada")),
            ("url=http://x", .field(name: "url", value: "http://x")),
            ("empty=", .field(name: "empty", value: "")),
            ("count:=3", .jsonField(name: "count", rawJSON: "3")),
            ("tags:=[\"a\"]", .jsonField(name: "tags", rawJSON: "[\"a\"]")),
            ("photo@/tmp/a.jpg", .fileField(name: "photo", path: "/tmp/a.jpg")),
            ("@body.json", .bodyFile(path: "body.json")),
            ("a\\=b=c", .field(name: "a=b", value: "c")),
            ("a\\:b=c", .field(name: "a:b", value: "c")),
        ]
    )
    func parsesEachKind(text: String, expected: RequestItem) throws {
        #expect(try RequestItem.parse(text) == expected)
    }

    @Test(arguments: ["plain", ":value", "=value", "==v", "bad name:v", "n:=not json", "n:={", "@", ":=3"])
    func rejectsWhatCannotBeSent(text: String) {
        #expect(throws: RequestItemError.self) { try RequestItem.parse(text) }
    }

    @Test func errorNamesTheItem() {
        do {
            _ = try RequestItem.parse("n:=nope")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("n:=nope"))
            #expect(error.description.contains("JSON"))
        }
    }
}
