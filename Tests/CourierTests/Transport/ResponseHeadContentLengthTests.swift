import Foundation
import Testing

@testable import Courier

/// `Content-Length` values a server chooses, as ``ResponseHead/expectedContentLength`` reads them;
/// a suite of its own beside `ResponseHeadTests`.
@Suite struct ResponseHeadContentLengthTests {
    private static func length(_ value: String) throws -> Int64 {
        let url = try #require(URL(string: "http://127.0.0.1:8080/get"))
        let head = ResponseHead(
            url: url,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: [("Content-Length", value)]
        )
        return head.expectedContentLength
    }

    /// Found by `Fuzz/Sources/FuzzHeaderBlock`: `Content-Length: -5` gave `-5`, a length below the
    /// documented "-1 when unknown" that progress and buffering would have trusted.
    @Test func aSignedOrMalformedLengthIsUnknown() throws {
        for value in ["-5", "+5", "-0", "5 5", "0x10", "", " ", "5, 5", "99999999999999999999"] {
            #expect(try Self.length(value) == -1, "\(value)")
        }
    }

    @Test func digitsAroundWhitespaceAreTheLength() throws {
        #expect(try Self.length("0") == 0)
        #expect(try Self.length(" 42\t") == 42)
        #expect(try Self.length("9223372036854775807") == Int64.max)
    }
}
