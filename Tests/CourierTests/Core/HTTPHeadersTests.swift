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
        // Alamofire's form: `app/version (bundle; build:n; system version) Courier/version`.
        let form = #/^[^/ ]+/[^ ]+ \([^();]+; build:[^();]+; [A-Za-z]+ [0-9.]+\) Courier/.+$/#
        #expect(agent.wholeMatch(of: form) != nil, "\(agent)")
    }

    @Test func theUserAgentTakesAlamofiresFormAndStaysOneSafeHeaderLine() {
        let bundled = HTTPHeader.composedUserAgent(
            executable: "My App",
            appVersion: "2.1",
            bundle: "org.example.MyApp",
            build: "42",
            system: "iOS 17.4.0"
        )
        #expect(bundled == "My-App/2.1 (org.example.MyApp; build:42; iOS 17.4.0) Courier/\(CourierVersion.current)")
        let bare = HTTPHeader.composedUserAgent(
            executable: "server",
            appVersion: nil,
            bundle: nil,
            build: nil,
            system: "Linux 6.1.0"
        )
        #expect(bare == "server/Unknown (server; build:Unknown; Linux 6.1.0) Courier/\(CourierVersion.current)")
        let hostile = HTTPHeader.composedUserAgent(
            executable: "",
            appVersion: "1 (x)",
            bundle: "a)b\r\nX-Injected: 1",
            build: "é;",
            system: "Linux"
        )
        #expect(!hostile.contains("\r") && !hostile.contains("\n"))
        #expect(hostile.hasPrefix("Courier/1--x- (a-b--X-Injected: 1; build:--; Linux) "))
        #expect(HTTPHeaders(["User-Agent": hostile]).firstInvalidity == nil)
    }

    @Test func removingAndSortingKeepTheIndexRight() {
        var headers = HTTPHeaders((0..<10).map { HTTPHeader(name: "X-\($0)", value: "\($0)") })
        headers.remove(name: "x-3")
        headers["X-7"] = nil
        #expect(headers.count == 8)
        for number in (0..<10) where number != 3 && number != 7 {
            #expect(headers["x-\(number)"] == "\(number)", "X-\(number)")
        }
        #expect(headers["X-3"] == nil && headers["X-7"] == nil)
        headers.update(name: "x-9", value: "nine")
        #expect(headers.map(\.name).last == "x-9" && headers.count == 8, "replaced in place, named as last set")
        headers.add(name: "A-First", value: "a")
        headers.sort()
        #expect(headers.first?.name == "A-First")
        #expect(headers["a-first"] == "a" && headers["X-9"] == "nine" && headers["x-0"] == "0")
        headers.remove(name: "A-FIRST")
        #expect(headers.first?.name == "X-0" && headers["x-0"] == "0")
    }

    /// A few headers are scanned and more are indexed: every lookup, update and removal must
    /// agree on both sides of the limit and across it.
    @Test func headersAreFoundAlikeBelowAndAboveTheScanLimit() {
        var headers = HTTPHeaders()
        let total = HTTPHeaders.scannedDirectly * 2 + 3
        for number in 0..<total {
            headers.add(name: "X-Header-\(number)", value: "\(number)")
            #expect(headers.count == number + 1)
            for earlier in 0...number {
                #expect(headers["x-header-\(earlier)"] == "\(earlier)", "\(earlier) of \(number + 1)")
            }
            #expect(headers["X-HEADER-\(number + 1)"] == nil)
        }
        headers.update(name: "x-HEADER-5", value: "five")
        #expect(headers.count == total && headers["X-Header-5"] == "five")
        #expect(headers.map(\.name)[5] == "x-HEADER-5", "replaced in place")
        for number in stride(from: total - 1, through: 0, by: -2) {
            headers.remove(name: "X-HEADER-\(number)")
        }
        for number in 0..<total {
            #expect(headers["x-header-\(number)"] == (number % 2 == 0 ? nil : number == 5 ? "five" : "\(number)"))
        }
        #expect(HTTPHeaders.namesMatch("Content-Type", "content-TYPE"))
        #expect(!HTTPHeaders.namesMatch("Content-Type", "Content-Typf"))
        #expect(!HTTPHeaders.namesMatch("a[", "A{"), "only letters compare case-insensitively")
    }

    @Test func dictionaryKeepsNamesAsAddedAndEqualityIgnoresCase() {
        var headers = HTTPHeaders()
        headers.add(name: "X-Mixed-Case", value: "1")
        headers.add(name: "x-mixed-case", value: "2")
        #expect(headers.dictionary == ["x-mixed-case": "2"])
        #expect(headers == ["X-MIXED-CASE": "2"])
        #expect(headers.hashValue == HTTPHeaders(["X-MIXED-CASE": "2"]).hashValue)
        #expect(headers != ["X-Mixed-Case": "2", "Other": "3"])
    }

    /// 30,000 headers built, read and converted. Linear work takes a fraction of a second in a
    /// debug build (the bound is generous, for a loaded machine); the quadratic code this
    /// replaced took minutes.
    @Test func thirtyThousandHeadersTakeLinearTime() async throws {
        let count = 30_000
        let (counts, elapsed) = try await offThePool { () -> [Int] in
            var headers = HTTPHeaders()
            for number in 0..<count { headers.add(name: "X-Header-\(number)", value: "\(number)") }
            var found = 0
            for number in 0..<count where headers["x-header-\(number)"] == "\(number)" { found += 1 }
            return [found, headers.dictionary.count, HTTPHeaders(headers.dictionary).count]
        }
        #expect(counts == [count, count, count])
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test(arguments: [
        ("a\u{7F}b", 1, "0x7F"), ("\u{1}x", 0, "0x1"), ("ab\u{1F}", 2, "0x1F"), ("x\u{8}", 1, "0x8"),
        ("é\u{7F}", 2, "0x7F"),
    ])
    func controlCharactersInValuesAreInvalid(value: String, offset: Int, byte: String) throws {
        let header = HTTPHeader(name: "Authorization", value: value)
        let reason = try #require(header.invalidityReason)
        #expect(reason.contains("control character"))
        #expect(reason.contains("(\(byte)) at byte \(offset)"), "\(reason)")
        #expect(reason.contains("\"Authorization\""))
        #expect(!reason.contains(value), "the value never appears in the reason")
    }

    @Test(arguments: [
        "plain", "with space and\ttab inside", " spaces around ", "\tleading tab", "café", "naïve ☃ 🚀",
        "\u{80}\u{FF} obs-text", "", "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    ])
    func fieldValuesPerRFC9110AreValid(value: String) {
        #expect(HTTPHeader(name: "X-Value", value: value).invalidityReason == nil)
    }

    @Test func theReasonNeverHoldsASecret() throws {
        let secret = "Bearer s3cr3t-t0ken"
        for value in [secret + "\r\n", secret + "\u{7F}", secret + "\u{0}", "\n" + secret] {
            let error = CourierError.invalidHeader(
                name: "Authorization",
                reason: try #require(HTTPHeader.authorization(value).invalidityReason)
            )
            #expect(!error.description.contains("s3cr3t"))
            #expect(!(error.errorDescription ?? "").contains("s3cr3t"))
            #expect(!String(reflecting: error).contains("s3cr3t"))
        }
    }

    @Test func badNamesAreEscapedInTheReason() throws {
        let reason = try #require(HTTPHeader(name: "X-\u{1B}[31mRed", value: "v").invalidityReason)
        #expect(!reason.contains("\u{1B}"), "no terminal escape reaches a message")
        #expect(reason.contains("\\x1B") && reason.contains("byte 2"))
        let long = try #require(HTTPHeader(name: String(repeating: "a ", count: 100), value: "v").invalidityReason)
        #expect(long.utf8.count < 200)
    }
}
