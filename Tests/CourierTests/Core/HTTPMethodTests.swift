import Testing

@testable import Courier

@Suite struct HTTPMethodTests {
    @Test func standardMethodsHaveTheirNames() {
        #expect(HTTPMethod.get.rawValue == "GET")
        #expect(HTTPMethod.post.description == "POST")
        #expect(HTTPMethod(rawValue: "PROPFIND") == HTTPMethod(rawValue: "PROPFIND"))
        #expect(HTTPMethod(rawValue: "get") != .get, "methods are case-sensitive")
    }

    @Test func idempotentMethodsAreTheRFCOnes() {
        let idempotent: [HTTPMethod] = [.get, .head, .put, .delete, .options, .trace, .query]
        for method in idempotent { #expect(method.isIdempotent, "\(method)") }
        for method in [HTTPMethod.post, .patch, .connect, HTTPMethod(rawValue: "LOCK")] {
            #expect(!method.isIdempotent, "\(method)")
        }
    }

    @Test func tokensRejectSpacesAndSeparators() {
        #expect(HTTPMethod(rawValue: "M-SEARCH").isValidToken)
        #expect(!HTTPMethod(rawValue: "").isValidToken)
        #expect(!HTTPMethod(rawValue: "GET /x").isValidToken)
        #expect(!HTTPMethod(rawValue: "GET\r\n").isValidToken)
    }
}
