import Courier
import CourierTestServer
import Foundation
import Testing

/// Alamofire's deprecated `responseJSON`, kept for code moving over: untyped JSON in Sendable
/// Swift values, on both transports.
@Suite struct JSONResponseSerializerTests {
    @Test(arguments: TransportKind.allCases)
    @available(*, deprecated, message: "exercises the deprecated responseJSON")
    func responseJSONGivesUntypedValues(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let response = await withCheckedContinuation { continuation in
                session.request(server.url("/get?q=swift")).responseJSON { continuation.resume(returning: $0) }
            }
            let object = try #require(response.value as? [String: Any])
            #expect((object["args"] as? [String: Any])?["q"] as? String == "swift")
            #expect(response.head?.statusCode == 200)

            let empty = await withCheckedContinuation { continuation in
                session.request(server.url("/status/204")).responseJSON { continuation.resume(returning: $0) }
            }
            #expect(empty.value is NSNull)

            let notJSON = await withCheckedContinuation { continuation in
                session.request(server.url("/html")).responseJSON { continuation.resume(returning: $0) }
            }
            if case .jsonSerializationFailed? = notJSON.error?.serializationFailureReason {
            } else {
                Issue.record("HTML read as JSON: \(notJSON)")
            }

            let downloaded = await withCheckedContinuation { continuation in
                session.download(server.url("/get?q=file")).responseJSON { continuation.resume(returning: $0) }
            }
            let file = try #require(downloaded.value as? [String: Any])
            #expect((file["args"] as? [String: Any])?["q"] as? String == "file")
            await session.invalidate()
        }
    }

    @Test @available(*, deprecated, message: "exercises the deprecated JSONResponseSerializer")
    func valuesKeepTheirKinds() throws {
        let body = Data(#"{"b": true, "i": 3, "d": 2.5, "s": "x", "n": null, "a": [1, false]}"#.utf8)
        let value = try JSONResponseSerializer().serialize(requestHead: nil, head: nil, data: body, error: nil)
        let object = try #require(value as? [String: any Sendable])
        #expect(object["b"] as? Bool == true)
        #expect(object["i"] as? Int == 3)
        #expect(object["d"] as? Double == 2.5)
        #expect(object["s"] as? String == "x")
        #expect(object["n"] is NSNull)
        let array = try #require(object["a"] as? [any Sendable])
        #expect(array.first as? Int == 1 && array.last as? Bool == false)
    }

    /// Integers stay exact however large (an id above 2^53 must not move), and a number written
    /// with a fraction or an exponent stays a Double.
    @Test @available(*, deprecated, message: "exercises the deprecated JSONResponseSerializer")
    func numbersStayExactAndKeepTheirKind() throws {
        let body = Data(
            #"[9007199254740993, 1234567890123456789, -42, 2.0, 1e3, -0.0, 18446744073709551615]"#.utf8
        )
        let value = try JSONResponseSerializer().serialize(requestHead: nil, head: nil, data: body, error: nil)
        let numbers = try #require(value as? [any Sendable])
        #expect(numbers[0] as? Int == 9_007_199_254_740_993)
        #expect(numbers[1] as? Int == 1_234_567_890_123_456_789)
        #expect(numbers[2] as? Int == -42)
        #expect(numbers[3] as? Double == 2.0)
        #expect(numbers[4] as? Double == 1000)
        #expect((numbers[5] as? Double)?.sign == .minus)
        #expect(numbers[6] is Double, "beyond Int's range: a Double")
    }
}
