import Courier
import CourierTestServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's dictionary encodings, `URLEncoding` and `JSONEncoding`, and
/// `request(_:method:parameters:encoding:)`.
@Suite struct ParameterEncodingTests {
    private static let url = URLComponents(string: "https://example.com/search?lang=en")?.url

    private static func request(_ method: HTTPMethod = .get) throws -> URLRequest {
        var request = URLRequest(url: try #require(url))
        request.httpMethod = method.rawValue
        return request
    }

    @Test func urlEncodingWritesSortedNestedKeysArraysBoolsAndNumbers() throws {
        let parameters: Parameters = [
            "q": "swift & nio",
            "page": 2,
            "ratio": 1.0,
            "half": 0.5,
            "exact": true,
            "tags": ["a", "b"],
            "filter": ["z": "last", "a": "first"],
            "missing": String?.none as any Sendable,
            "present": String?.some("yes") as any Sendable,
        ]
        let encoded = try URLEncoding.default.encode(try Self.request(), with: parameters)
        #expect(
            encoded.url?.query
                == "lang=en&exact=1&filter%5Ba%5D=first&filter%5Bz%5D=last&half=0.5&page=2&present=yes"
                + "&q=swift%20%26%20nio&ratio=1&tags%5B%5D=a&tags%5B%5D=b"
        )
        #expect(encoded.httpBody == nil)
    }

    @Test func arrayAndBoolEncodingsAreChosen() throws {
        let parameters: Parameters = ["ids": [1, 2], "on": false]
        func query(_ encoding: URLEncoding) throws -> String? {
            try encoding.encode(try Self.request(), with: parameters).url?.query
        }
        #expect(try query(URLEncoding(arrayEncoding: .noBrackets)) == "lang=en&ids=1&ids=2&on=0")
        #expect(try query(URLEncoding(arrayEncoding: .indexInBrackets)) == "lang=en&ids%5B0%5D=1&ids%5B1%5D=2&on=0")
        #expect(
            try query(URLEncoding(arrayEncoding: .custom { key, index in "\(key).\(index)" }))
                == "lang=en&ids.0=1&ids.1=2&on=0"
        )
        #expect(try query(URLEncoding(boolEncoding: .literal)) == "lang=en&ids%5B%5D=1&ids%5B%5D=2&on=false")
    }

    /// Numbers from `JSONSerialization` are `NSNumber`s: a Bool among them is still a Bool.
    @Test func foundationNumbersKeepTheirKind() throws {
        let object = try JSONSerialization.jsonObject(with: Data(#"{"flag": true, "count": 3, "share": 2.5}"#.utf8))
        let dictionary = try #require(object as? [String: Any])
        let encoding = URLEncoding.default
        #expect(encoding.queryComponents(fromKey: "flag", value: dictionary["flag"] as Any).first?.1 == "1")
        #expect(encoding.queryComponents(fromKey: "count", value: dictionary["count"] as Any).first?.1 == "3")
        #expect(encoding.queryComponents(fromKey: "share", value: dictionary["share"] as Any).first?.1 == "2.5")
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func theBodyTakesTheParametersForOtherMethods(method: HTTPMethod) throws {
        let encoded = try URLEncoding.default.encode(try Self.request(method), with: ["name": "Ada Lovelace"])
        #expect(encoded.url == Self.url)
        #expect(encoded.httpBody == Data("name=Ada%20Lovelace".utf8))
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
        // Forced destinations, and a Content-Type the request has is kept.
        var typed = try Self.request(.get)
        typed.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let body = try URLEncoding.httpBody.encode(typed, with: ["a": 1])
        #expect(body.httpBody == Data("a=1".utf8) && body.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(
            try URLEncoding.queryString.encode(try Self.request(method), with: ["a": 1]).url?.query == "lang=en&a=1"
        )
        let unchanged = try Self.request(method)
        #expect(try URLEncoding.default.encode(unchanged, with: nil) == unchanged)
    }

    @Test func jsonEncodingWritesTheBody() throws {
        let encoded = try JSONEncoding.default.encode(
            try Self.request(.post),
            with: ["name": "Ada", "tags": ["x"], "n": 1]
        )
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let body = try #require(encoded.httpBody)
        let decoded = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(decoded["name"] as? String == "Ada")
        #expect(decoded["tags"] as? [String] == ["x"])
        #expect((decoded["n"] as? NSNumber)?.intValue == 1)
        let pretty = try JSONEncoding.prettyPrinted.encode(try Self.request(.post), with: ["a": 1])
        #expect(pretty.httpBody.map { String(decoding: $0, as: UTF8.self).contains("\n") } == true)
        let array = try JSONEncoding.default.encode(try Self.request(.post), withJSONObject: [1, 2])
        #expect(array.httpBody == Data("[1,2]".utf8))
        #expect(try JSONEncoding.default.encode(try Self.request(.post), with: nil).httpBody == nil)
    }

    /// What JSON cannot hold fails with a CourierError before `JSONSerialization` sees it (on
    /// Apple platforms it raises an exception no Swift code can catch).
    @Test(arguments: [Date() as any Sendable, Double.nan as any Sendable, Double.infinity as any Sendable])
    func whatJSONCannotHoldFailsCleanly(value: any Sendable) {
        #expect {
            try JSONEncoding.default.encode(try Self.request(.post), with: ["bad": value])
        } throws: { error in
            (error as? CourierError)?.kind == .parameterEncodingFailed
        }
    }

    /// A Foundation integer is written from its own text: 2^53 + 1 must not round.
    @Test func foundationIntegersAreExact() {
        let encoding = URLEncoding.default
        let big = NSNumber(value: Int64(9_007_199_254_740_993))
        #expect(encoding.queryComponents(fromKey: "id", value: big).first?.1 == "9007199254740993")
    }

    /// `nil` is left out of a query and written `null` in JSON, on every platform.
    @Test func nilIsLeftOutOfAQueryAndNullInJSON() throws {
        let parameters: Parameters = ["a": 1, "gone": String?.none as any Sendable]
        #expect(try URLEncoding.queryString.encode(try Self.request(), with: parameters).url?.query == "lang=en&a=1")
        let body = try #require(try JSONEncoding.default.encode(try Self.request(.post), with: parameters).httpBody)
        let decoded = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(decoded["gone"] is NSNull)
        // Empty parameters: a GET is left alone, a POST gets an empty form body.
        let get = try Self.request()
        #expect(try URLEncoding.default.encode(get, with: [:]) == get)
        let post = try URLEncoding.default.encode(try Self.request(.post), with: [:])
        #expect(post.httpBody == Data())
        #expect(post.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    // MARK: - Over both transports

    /// A literal whose values are all of one `Encodable` type keeps the `Encodable` form (its
    /// `URLEncodedFormEncoder`), as before `Parameters` came and as in Alamofire; one of mixed
    /// types, or a `Parameters` value, takes `URLEncoding`. A raw-value enum shows which ran:
    /// the form encoder writes its raw value, `URLEncoding` its description.
    @Test(arguments: TransportKind.allCases)
    func aLiteralOfOneEncodableTypeKeepsTheEncodableForm(transport: TransportKind) async throws {
        enum Order: String, Encodable, Sendable {
            case ascending = "asc"
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let typed = try await session.request(server.url("/get"), parameters: ["order": Order.ascending])
                .serializingDecodable(URLEcho.self).value
            #expect(typed.url.hasSuffix("/get?order=asc"))
            let untyped: Parameters = ["order": Order.ascending]
            let dictionary = try await session.request(server.url("/get"), parameters: untyped)
                .serializingDecodable(URLEcho.self).value
            #expect(dictionary.url.hasSuffix("/get?order=ascending"))
            await session.invalidate()
        }
    }

    private struct FormEcho: Decodable, Sendable {
        var form: [String: String]
        var headers: [String: String]
    }

    private struct JSONEcho: Decodable, Sendable {
        struct Body: Decodable, Equatable, Sendable {
            var name: String
            var admin: Bool
            var tags: [String]
        }

        var json: Body
        var headers: [String: String]
    }

    private struct URLEcho: Decodable, Sendable {
        var url: String
    }

    /// The form encoder's Alamofire options reach the wire: dotted key paths, `nil` as `null`,
    /// keys upper-cased.
    @Test(arguments: TransportKind.allCases)
    func formEncoderOptionsShapeTheQuery(transport: TransportKind) async throws {
        struct Filter: Encodable, Sendable {
            var range = ["from": 1]
            var owner: String? = nil
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let form = URLEncodedFormEncoder(keyEncoding: .uppercased, keyPathEncoding: .dots, nilEncoding: .null)
            let echo = try await session.request(
                server.url("/get"),
                parameters: Filter(),
                encoder: URLEncodedFormParameterEncoder.urlEncodedForm(encoder: form)
            )
            .validate().serializingDecodable(URLEcho.self).value
            #expect(echo.url.hasSuffix("/get?OWNER=null&RANGE.FROM=1"))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDictionaryGoesInTheQueryOfAGet(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let parameters: Parameters = ["q": "swift", "page": 2, "tags": ["a", "b"]]
            let echo = try await session.request(server.url("/get"), parameters: parameters).validate()
                .serializingDecodable(URLEcho.self).value
            #expect(echo.url.hasSuffix("/get?page=2&q=swift&tags%5B%5D=a&tags%5B%5D=b"))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDictionaryBecomesAFormOrAJSONBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let form = try await session.request(
                server.url("/post"),
                method: .post,
                parameters: ["name": "Ada", "admin": true]
            )
            .validate().serializingDecodable(FormEcho.self).value
            #expect(form.form == ["name": "Ada", "admin": "1"])
            #expect(form.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")

            let json = try await session.request(
                server.url("/post"),
                method: .post,
                parameters: ["name": "Ada", "admin": true, "tags": ["x", "y"]],
                encoding: JSONEncoding.default
            )
            .validate().serializingDecodable(JSONEcho.self).value
            #expect(json.json == .init(name: "Ada", admin: true, tags: ["x", "y"]))
            #expect(json.headers["Content-Type"] == "application/json")

            // What JSON cannot hold fails before anything is sent.
            let bad = await session.request(
                server.url("/post"),
                method: .post,
                parameters: ["when": Date()],
                encoding: JSONEncoding.default
            )
            .serializingData().response
            #expect(bad.error?.kind == .parameterEncodingFailed)
            #expect(bad.head == nil, "nothing was sent")
            await session.invalidate()
        }
    }
}
