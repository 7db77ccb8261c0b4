import Foundation
import Testing

@testable import Courier

@Suite struct HTTPHeadersTests {
    @Test func namesCompareCaseInsensitivelyAndUpdatesReplaceInPlace() {
        var headers: HTTPHeaders = ["Accept": "text/html", "X-One": "1"]
        headers.add(name: "accept", value: "application/json")
        headers.update(.contentType("application/json"))
        #expect(headers.map(\.name) == ["accept", "X-One", "Content-Type"])
        #expect(headers["ACCEPT"] == "application/json")
        #expect(headers.value(for: "content-type") == "application/json")
        headers["x-one"] = nil
        #expect(headers.count == 2)
        headers.remove(name: "missing")
        #expect(headers.count == 2)
    }

    @Test func initialisersKeepTheLastOfRepeatedNames() {
        let headers = HTTPHeaders([HTTPHeader(name: "A", value: "1"), HTTPHeader(name: "a", value: "2")])
        #expect(headers.count == 1 && headers["A"] == "2")
        let fromDictionary = HTTPHeaders(["b": "2", "a": "1"])
        #expect(fromDictionary.map(\.name) == ["a", "b"], "dictionaries are sorted for a stable order")
        #expect(fromDictionary.dictionary == ["a": "1", "b": "2"])
    }

    @Test func sortingAndEquality() {
        let headers: HTTPHeaders = ["b": "2", "A": "1"]
        #expect(headers.sorted().map(\.name) == ["A", "b"])
        #expect(HTTPHeaders(["x": "1"]) == HTTPHeaders(["X": "1"]))
        #expect(Set([HTTPHeaders(["x": "1"]), HTTPHeaders(["X": "1"])]).count == 1)
        #expect(HTTPHeaders(["x": "1"]) != HTTPHeaders(["x": "2"]))
    }

    @Test func helpersBuildTheCommonHeaders() {
        #expect(
            HTTPHeader.authorization(username: "user", password: "pässword").value
                == "Basic " + Data("user:pässword".utf8).base64EncodedString()
        )
        #expect(HTTPHeader.authorization(bearerToken: "abc") == HTTPHeader(name: "Authorization", value: "Bearer abc"))
        #expect(HTTPHeader.accept("application/json").name == "Accept")
        #expect(HTTPHeader.userAgent("x").name == "User-Agent")
    }

    @Test func descriptionsRedactCredentials() {
        let headers: HTTPHeaders = [
            .authorization(bearerToken: "secret-token"), HTTPHeader(name: "Cookie", value: "session=secret"),
            .accept("*/*"),
        ]
        #expect(!headers.description.contains("secret"))
        #expect(headers.description.contains("Accept: */*"))
        #expect(headers.description.contains("Authorization: ***"))
    }

    @Test(arguments: ["a\r\nInjected: yes", "a\nb", "a\rb", "a\u{0}b"])
    func valuesWithLineBreaksAreInvalid(value: String) {
        let headers: HTTPHeaders = ["Good": "fine", "X-Bad": value]
        #expect(headers.firstInvalidity?.header.name == "X-Bad")
        #expect(headers.firstInvalidity?.reason.contains("CR, LF or NUL") == true)
    }

    @Test(arguments: ["", "Bad Name", "Bad:Name", "Bad\r\nName"])
    func namesMustBeTokens(name: String) {
        #expect(HTTPHeader(name: name, value: "v").invalidityReason != nil)
    }

    @Test func validHeadersPass() {
        #expect(HTTPHeaders.default.firstInvalidity == nil)
        #expect(HTTPHeaders(["X-Empty": "", "Accept": "a/b; q=0.5"]).firstInvalidity == nil)
    }

    @Test func defaultsNameCourierAndTheSystemLanguages() throws {
        let defaults = HTTPHeaders.default
        #expect(defaults["Accept-Encoding"] == "gzip;q=1.0, deflate;q=0.9")
        let agent = try #require(defaults["User-Agent"])
        #expect(agent.hasSuffix("Courier/\(CourierVersion.current)"))
        let languages = try #require(defaults["Accept-Language"])
        #expect(languages.hasSuffix(";q=1.0") || languages.contains(";q=1.0, "))
    }
}
