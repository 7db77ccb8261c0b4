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

    @Test func userInfoBecomesBasicAuthentication() throws {
        let request = URLRequest(url: try #require(URL(string: "http://ada:s%20cret@127.0.0.1:8080/get?a=1#f")))
        let moved = try movingUserInfo(of: request)
        #expect(moved.url?.absoluteString == "http://127.0.0.1:8080/get?a=1#f")
        #expect(
            moved.value(forHTTPHeaderField: "Authorization") == "Basic " + Data("ada:s cret".utf8).base64EncodedString()
        )
        let userOnly = try movingUserInfo(of: URLRequest(url: try #require(URL(string: "http://ada@127.0.0.1/"))))
        #expect(userOnly.url?.absoluteString == "http://127.0.0.1/")
        #expect(
            userOnly.value(forHTTPHeaderField: "Authorization") == "Basic " + Data("ada:".utf8).base64EncodedString()
        )
    }

    @Test func anExistingAuthorizationIsKept() throws {
        var request = URLRequest(url: try #require(URL(string: "http://ada:secret@127.0.0.1/")))
        request.setValue("Bearer t", forHTTPHeaderField: "authorization")
        let moved = try movingUserInfo(of: request)
        #expect(moved.url?.absoluteString == "http://127.0.0.1/")
        #expect(moved.allHTTPHeaderFields?.count == 1)
        #expect(moved.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test func aURLWithoutUserInfoIsUntouched() throws {
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1/a@b")))
        #expect(try movingUserInfo(of: request) == request)
    }

    @Test func aHeadMadeOfPartsMovesUserInfoToo() throws {
        let url = try #require(URL(string: "http://ada:s%20cret@127.0.0.1:8080/get?a=1#f"))
        let moved = try RequestHead(method: .get, url: url).movingUserInfoToAuthorization()
        #expect(moved.url.absoluteString == "http://127.0.0.1:8080/get?a=1#f")
        #expect(moved.headers["Authorization"] == "Basic " + Data("ada:s cret".utf8).base64EncodedString())
        #expect(moved.urlRequest.value(forHTTPHeaderField: "Authorization") == moved.headers["Authorization"])
        let kept = try RequestHead(method: .get, url: url, headers: ["authorization": "Bearer t"])
            .movingUserInfoToAuthorization()
        #expect(kept.headers.count == 1)
        #expect(kept.headers["Authorization"] == "Bearer t")
    }

    /// The URL's user info moved into `Authorization`, as Courier does before each attempt: on
    /// the head read from `request`, which keeps that `URLRequest` in step.
    private func movingUserInfo(of request: URLRequest) throws -> URLRequest {
        try #require(RequestHead(request)).movingUserInfoToAuthorization().urlRequest
    }

    /// Basic cannot carry a `:` in the user name (the server splits at the first) nor a control
    /// character: user info that decodes to either is refused, never sent as another credential.
    @Test(arguments: [
        ("http://a%3Ab:pw@127.0.0.1/get", CourierError.CredentialEncodingFailureReason.colonInBasicUserName),
        ("http://ada:pw%0A@127.0.0.1/get", .controlCharacterInBasicCredential),
        ("http://ad%7Fa:pw@127.0.0.1/get", .controlCharacterInBasicCredential),
    ])
    func userInfoBasicCannotCarryIsRefused(url: String, reason: CourierError.CredentialEncodingFailureReason) throws {
        let head = RequestHead(method: .get, url: try #require(URL(string: url)))
        #expect(throws: CourierError.self) { try head.movingUserInfoToAuthorization() }
        do {
            _ = try head.movingUserInfoToAuthorization()
        } catch {
            #expect(error.kind == .credentialEncodingFailed)
            #expect(error.credentialEncodingFailureReason == reason)
            #expect(error.errorDescription?.contains("pw") == false)
        }
        // A password may hold a colon: only the first one splits.
        let colonInPassword = try RequestHead(
            method: .get,
            url: try #require(URL(string: "http://ada:p%3Aw@127.0.0.1/"))
        )
        .movingUserInfoToAuthorization()
        #expect(colonInPassword.headers["Authorization"] == "Basic " + Data("ada:p:w".utf8).base64EncodedString())
    }

    /// Alamofire's `URLRequest(url:method:headers:)`, `method` and `headers`.
    @Test func alamofiresConveniencesReadAndWriteTheRequest() throws {
        var request = try URLRequest(url: "http://127.0.0.1/post", method: .post, headers: ["X-Trace": "1"])
        #expect(request.httpMethod == "POST" && request.method == .post)
        #expect(request.headers["X-Trace"] == "1")
        request.method = .patch
        request.headers = ["Accept": "text/plain"]
        #expect(request.httpMethod == "PATCH")
        #expect(request.allHTTPHeaderFields == ["Accept": "text/plain"])
        request.method = nil
        #expect(request.httpMethod == "GET", "URLRequest reports GET once the method is cleared")
        #expect(throws: CourierError.self) { try URLRequest(url: "http://[::1", method: .get) }
    }
}
