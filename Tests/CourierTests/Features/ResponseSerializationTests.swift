import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct ResponseSerializationTests {
    private func response(_ status: Int = 200, contentType: String? = nil) -> HTTPURLResponse? {
        HTTPURLResponse(
            url: URL(fileURLWithPath: "/"),
            statusCode: status,
            httpVersion: "HTTP/1.1",
            headerFields: contentType.map { ["Content-Type": $0] }
        )
    }

    private func request(_ method: HTTPMethod) -> URLRequest {
        var request = URLRequest(url: URL(fileURLWithPath: "/"))
        request.httpMethod = method.rawValue
        return request
    }

    @Test func stringsFollowTheResponseCharset() throws {
        let latin1 = Data([0x63, 0x61, 0x66, 0xE9])  // "café" in ISO-8859-1
        let serializer = StringResponseSerializer()
        #expect(
            try serializer.serialize(
                request: nil,
                response: response(contentType: "text/plain; charset=ISO-8859-1"),
                data: latin1,
                error: nil
            ) == "café"
        )
        #expect(
            try serializer.serialize(
                request: nil,
                response: response(contentType: "text/plain"),
                data: latin1,
                error: nil
            )
                == "café",
            "no charset and not UTF-8: ISO-8859-1"
        )
        #expect(
            try serializer.serialize(request: nil, response: response(), data: Data("日本".utf8), error: nil) == "日本"
        )
        #expect(throws: CourierError.self) {
            try serializer.serialize(
                request: nil,
                response: response(contentType: "text/plain; charset=utf-8"),
                data: latin1,
                error: nil
            )
        }
    }

    @Test func emptyBodiesDependOnStatusAndMethod() throws {
        let data = DataResponseSerializer()
        #expect(try data.serialize(request: nil, response: response(204), data: nil, error: nil) == Data())
        #expect(try data.serialize(request: request(.head), response: response(200), data: nil, error: nil) == Data())
        #expect(throws: CourierError.self) {
            try data.serialize(request: request(.get), response: response(200), data: nil, error: nil)
        }
        let custom = DataResponseSerializer(emptyResponseCodes: [200], emptyRequestMethods: [])
        #expect(
            try custom.serialize(request: request(.get), response: response(200), data: Data(), error: nil) == Data()
        )
        #expect(throws: CourierError.self) {
            try custom.serialize(request: request(.head), response: response(204), data: nil, error: nil)
        }
    }

    @Test func decodableTurnsEmptyIntoEmptyResponseTypesOnly() throws {
        let empty = DecodableResponseSerializer<Empty>()
        #expect(try empty.serialize(request: nil, response: response(204), data: nil, error: nil) == Empty.value)
        let numbers = DecodableResponseSerializer<[Int]>()
        #expect(throws: CourierError.self) {
            try numbers.serialize(request: nil, response: response(204), data: nil, error: nil)
        }
        #expect(
            try numbers.serialize(request: nil, response: response(), data: Data("[1,2]".utf8), error: nil) == [1, 2]
        )
    }

    @Test func requestErrorsPassThrough() {
        #expect {
            try DataResponseSerializer().serialize(request: nil, response: nil, data: nil, error: .explicitlyCancelled)
        } throws: { ($0 as? CourierError)?.isExplicitlyCancelledError == true }
    }

    @Test func contentTypeMatchingHonoursWildcardsAndIgnoresParameters() {
        #expect(
            ContentTypeValidation.failure(
                acceptable: ["application/json"],
                responseContentType: "application/json; charset=utf-8",
                bodyIsEmpty: false
            ) == nil
        )
        #expect(
            ContentTypeValidation.failure(acceptable: ["text/*"], responseContentType: "text/html", bodyIsEmpty: false)
                == nil
        )
        #expect(ContentTypeValidation.failure(acceptable: ["*/*"], responseContentType: nil, bodyIsEmpty: false) == nil)
        #expect(
            ContentTypeValidation.failure(acceptable: ["application/json"], responseContentType: nil, bodyIsEmpty: true)
                == nil
        )
        #expect(
            ContentTypeValidation.failure(
                acceptable: ["application/json"],
                responseContentType: "text/html",
                bodyIsEmpty: false
            )?.kind == .responseValidationFailed
        )
        #expect(
            ContentTypeValidation.failure(
                acceptable: ["application/json"],
                responseContentType: nil,
                bodyIsEmpty: false
            ) != nil
        )
        #expect(
            ContentTypeValidation.failure(acceptable: ["bogus"], responseContentType: "text/html", bodyIsEmpty: false)
                != nil
        )
    }
}
