import Foundation
import Testing

@testable import courier

@Suite struct RequestPlanTests {
    @Test func getWithoutBody() throws {
        let plan = try RequestPlan.make(arguments: [":8080/get", "a==1", "X-Foo:bar"])
        #expect(plan.method == "GET")
        #expect(plan.url.absoluteString == "http://localhost:8080/get?a=1")
        #expect(plan.headers["X-Foo"] == "bar")
        #expect(plan.body == .none)
    }

    @Test func fieldsMakeAJSONPostInOrder() throws {
        let plan = try RequestPlan.make(arguments: [":1/post", "z=last?", "count:=3", "tags:= [\"a\"] ", "a=\"q\""])
        #expect(plan.method == "POST")
        #expect(plan.body == .data(Data(#"{"z": "last?", "count": 3, "tags": ["a"], "a": "\"q\""}"#.utf8)))
        #expect(plan.headers["Content-Type"] == "application/json")
        #expect(plan.headers["Accept"] == "application/json, */*;q=0.5")
    }

    @Test func formEncodesFields() throws {
        let plan = try RequestPlan.make(arguments: [":1/post", "a=1 2", "b=&"], format: .form)
        #expect(plan.body == .data(Data("a=1%202&b=%26".utf8)))
        #expect(plan.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func fileFieldMakesMultipart() throws {
        let plan = try RequestPlan.make(arguments: [":1/post", "name=Ada", "photo@/tmp/p.jpg"])
        #expect(plan.method == "POST")
        #expect(plan.body == .multipart([.text(name: "name", value: "Ada"), .file(name: "photo", path: "/tmp/p.jpg")]))
        #expect(plan.headers["Content-Type"] == nil)  // the form sets it, with its boundary
    }

    @Test func bodyFileWithExplicitMethod() throws {
        let plan = try RequestPlan.make(arguments: ["put", ":1/put", "@data.bin"])
        #expect(plan.method == "PUT")
        #expect(plan.body == .file(path: "data.bin"))
    }

    @Test func customMethodInCapitals() throws {
        #expect(try RequestPlan.make(arguments: ["PURGE", ":1/x"]).method == "PURGE")
        // A lone word is the URL, and a lowercase unknown word is a host.
        #expect(try RequestPlan.make(arguments: ["localhost"]).url.absoluteString == "http://localhost")
        #expect(try RequestPlan.make(arguments: ["myhost", "a==1"]).url.host == "myhost")
    }

    @Test func credentialsAndUserHeadersWin() throws {
        let basic = try RequestPlan.make(arguments: [":1/x"], basicCredentials: "user:pa:ss")
        #expect(basic.headers["Authorization"] == "Basic " + Data("user:pa:ss".utf8).base64EncodedString())
        let bearer = try RequestPlan.make(arguments: [":1/x"], bearerToken: "t0k")
        #expect(bearer.headers["Authorization"] == "Bearer t0k")
        let overridden = try RequestPlan.make(arguments: [":1/x", "a=1", "Content-Type:text/plain"])
        #expect(overridden.headers["Content-Type"] == "text/plain")
    }

    /// A Basic credential the server would read as another is refused, naming where it came
    /// from but never showing it; Digest, which quotes the user name, still takes it.
    @Test func aBasicCredentialThatCannotBeWrittenIsRefused() throws {
        do {
            _ = try RequestPlan.make(arguments: ["http://a%3Ab:secret@localhost:1/x"])
            Issue.record("a user name with ':' was sent")
        } catch {
            #expect(error.item == "the URL's user info")
            #expect(!error.description.contains("secret"))
        }
        #expect(throws: RequestItemError.self) {
            try RequestPlan.make(arguments: [":1/x"], basicCredentials: "user:pa\u{7}ss")
        }
        // A ':' with a combining mark after it is one Character, but still the byte the server
        // splits at.
        #expect(throws: RequestItemError.self) {
            try RequestPlan.make(arguments: ["http://a%3A%CC%81b:pw@localhost:1/x"])
        }
        let combining = try RequestPlan.make(arguments: [":1/x"], basicCredentials: "a:\u{301}b")
        #expect(combining.headers["Authorization"] == "Basic " + Data("a:\u{301}b".utf8).base64EncodedString())
        let digest = try RequestPlan.make(arguments: ["http://a%3Ab:secret@localhost:1/x"], authType: .digest)
        #expect(digest.credential?.user == "a:b")
        #expect(digest.headers["Authorization"] == nil)
    }

    @Test(
        arguments: [
            [String](),
            [":1/x", "@a", "b=1"],
            [":1/x", "@a", "@b"],
            [":1/x", "n:=1", "f@file"],
        ]
    )
    func rejectsConflicts(arguments: [String]) {
        #expect(throws: RequestItemError.self) { try RequestPlan.make(arguments: arguments) }
    }

    @Test func rawJSONIsRefusedInAForm() {
        #expect(throws: RequestItemError.self) { try RequestPlan.make(arguments: [":1/x", "n:=1"], format: .form) }
    }

    @Test func quotesControlCharacters() {
        #expect(RequestPlan.quoted("a\"b\\c\n\u{1}") == #""a\"b\\c\n\u0001""#)
    }

    @Test func credentialsInTheURLBecomeBasicAuthentication() throws {
        let plan = try RequestPlan.make(arguments: ["http://ada:s%3Acret@127.0.0.1:1/x"])
        #expect(plan.url.absoluteString == "http://127.0.0.1:1/x")
        #expect(plan.headers["Authorization"] == "Basic " + Data("ada:s:cret".utf8).base64EncodedString())
        let explicit = try RequestPlan.make(arguments: ["http://ada:s3cret@127.0.0.1:1/x"], basicCredentials: "bob:pw")
        #expect(explicit.url.absoluteString == "http://127.0.0.1:1/x")
        #expect(explicit.headers["Authorization"] == "Basic " + Data("bob:pw".utf8).base64EncodedString())
        let bearer = try RequestPlan.make(arguments: ["http://ada:s3cret@127.0.0.1:1/x"], bearerToken: "t")
        #expect(bearer.headers["Authorization"] == "Bearer t")
    }
}
