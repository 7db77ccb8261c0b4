import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct ParameterEncoderTests {
    private func request(
        _ method: HTTPMethod,
        _ url: String = "https://example.org/search?lang=en"
    ) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method.rawValue
        return request
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete])
    func formParametersGoInTheQueryForQueryMethods(method: HTTPMethod) throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(["q": "swift nio"], into: request(method))
        #expect(encoded.url?.absoluteString == "https://example.org/search?lang=en&q=swift%20nio")
        #expect(encoded.httpBody == nil)
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func formParametersGoInTheBodyForOthers(method: HTTPMethod) throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(
            ["q": "swift", "n": "1"],
            into: request(method)
        )
        #expect(encoded.url?.absoluteString == "https://example.org/search?lang=en")
        #expect(encoded.httpBody == Data("n=1&q=swift".utf8))
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func destinationCanBeForced() throws {
        let query = URLEncodedFormParameterEncoder(destination: .queryString)
        #expect(try query.encode(["a": 1], into: request(.post)).url?.query == "lang=en&a=1")
        let body = URLEncodedFormParameterEncoder(destination: .httpBody)
        #expect(try body.encode(["a": 1], into: request(.get)).httpBody == Data("a=1".utf8))
    }

    @Test func anExistingContentTypeIsKept() throws {
        var original = try request(.post)
        original.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let encoded = try URLEncodedFormParameterEncoder.default.encode(["a": 1], into: original)
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func nilParametersLeaveTheRequestAlone() throws {
        let original = try request(.post)
        #expect(
            try URLEncodedFormParameterEncoder.default.encode(Optional<[String: String]>.none, into: original)
                == original
        )
        #expect(try JSONParameterEncoder.default.encode(Optional<[String: String]>.none, into: original) == original)
    }

    @Test func unencodableParametersFailWithACourierError() throws {
        #expect {
            _ = try URLEncodedFormParameterEncoder.default.encode([1, 2], into: request(.get))
        } throws: { error in
            (error as? CourierError)?.kind == .parameterEncodingFailed
                && (error as? CourierError)?.underlyingError is URLEncodedFormEncoder.Failure
        }
        #expect {
            _ = try JSONParameterEncoder.default.encode(["x": Double.nan], into: request(.post))
        } throws: { error in
            (error as? CourierError)?.kind == .parameterEncodingFailed
        }
    }

    @Test func jsonParametersBecomeAJSONBody() throws {
        struct Login: Encodable, Sendable {
            var user = "ada"
            var remember = true
        }
        let encoded = try JSONParameterEncoder.sortedKeys.encode(Login(), into: request(.post))
        #expect(encoded.httpBody == Data(#"{"remember":true,"user":"ada"}"#.utf8))
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let configured = JSONParameterEncoder { $0.keyEncodingStrategy = .convertToSnakeCase }
        #expect(try configured.encode(["someKey": 1], into: request(.post)).httpBody == Data(#"{"someKey":1}"#.utf8))
    }
}
