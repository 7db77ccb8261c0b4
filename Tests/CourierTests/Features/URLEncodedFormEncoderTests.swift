import Foundation
import Testing

@testable import Courier

@Suite struct URLEncodedFormEncoderTests {
    private struct Profile: Encodable {
        var name = "Ada Lovelace"
        var age = 36
        var ratio = 1.0
        var score = 2.5
        var active = true
        var tags = ["math", "poetry"]
        var limits = ["rate": 2, "burst": 10]
        var nickname: String? = nil
    }

    @Test func encodesNestedValuesAsServersReadThem() throws {
        let text = try URLEncodedFormEncoder().encode(Profile())
        #expect(
            text == "active=1&age=36&limits%5Bburst%5D=10&limits%5Brate%5D=2&name=Ada%20Lovelace&ratio=1"
                + "&score=2.5&tags%5B%5D=math&tags%5B%5D=poetry"
        )
    }

    @Test func arrayEncodingsNameElements() throws {
        let value = ["a": [1, 2]]
        #expect(try URLEncodedFormEncoder(arrayEncoding: .noBrackets).encode(value) == "a=1&a=2")
        #expect(try URLEncodedFormEncoder(arrayEncoding: .indexInBrackets).encode(value) == "a%5B0%5D=1&a%5B1%5D=2")
    }

    @Test func boolsCanBeLiteral() throws {
        #expect(
            try URLEncodedFormEncoder(boolEncoding: .literal).encode(["on": true, "off": false]) == "off=false&on=true"
        )
    }

    @Test func numbersHaveNoNeedlessFraction() throws {
        let numbers: [String: Double] = ["a": 1, "b": -3, "c": 0.25, "d": 1e20]
        #expect(try URLEncodedFormEncoder().encode(numbers) == "a=1&b=-3&c=0.25&d=1e%2B20")
        #expect(try URLEncodedFormEncoder().encode(["f": Float(1.1)]) == "f=1.1")
        struct Integers: Encodable {
            var small = UInt8(255)
            var large = Int64.min
        }
        #expect(try URLEncodedFormEncoder().encode(Integers()) == "large=-9223372036854775808&small=255")
        #expect(try URLEncodedFormEncoder().encode(["d": Decimal(string: "12.50")]) == "d=12.5")
    }

    @Test func datesFollowTheStrategy() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try URLEncodedFormEncoder(dateEncoding: .secondsSince1970).encode(["d": date]) == "d=1700000000")
        #expect(
            try URLEncodedFormEncoder(dateEncoding: .millisecondsSince1970).encode(["d": date]) == "d=1700000000000"
        )
        #expect(try URLEncodedFormEncoder(dateEncoding: .iso8601).encode(["d": date]) == "d=2023-11-14T22%3A13%3A20Z")
        #expect(try URLEncodedFormEncoder(dateEncoding: .custom { _ in "x" }).encode(["d": date]) == "d=x")
    }

    @Test func dataIsBase64ByDefault() throws {
        #expect(try URLEncodedFormEncoder().encode(["b": Data([0xFF, 0x00])]) == "b=/wA%3D")
    }

    @Test func keysCanBeConverted() throws {
        struct Keys: Encodable {
            var userName = "a"
            var httpURL2Value = "b"
        }
        #expect(
            try URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase).encode(Keys())
                == "http_url2_value=b&user_name=a"
        )
        #expect(
            try URLEncodedFormEncoder(keyEncoding: .convertToKebabCase).encode(Keys())
                == "http-url2-value=b&user-name=a"
        )
    }

    @Test func spacesAndReservedCharactersAreEscaped() throws {
        let value = ["q": "a b&c=d/e?f+g#h", "ü": "é"]
        #expect(try URLEncodedFormEncoder().encode(value) == "q=a%20b%26c%3Dd/e?f%2Bg%23h&%C3%BC=%C3%A9")
        #expect(try URLEncodedFormEncoder(spaceEncoding: .plusReplaced).encode(["q": "a b"]) == "q=a+b")
    }

    @Test func orderCanFollowTheValue() throws {
        struct Ordered: Encodable {
            var zeta = 1
            var alpha = 2
        }
        #expect(try URLEncodedFormEncoder(alphabetizeKeyValuePairs: false).encode(Ordered()) == "zeta=1&alpha=2")
    }

    @Test func topLevelMustBeKeyed() {
        #expect(throws: URLEncodedFormEncoder.Failure.self) { try URLEncodedFormEncoder().encode([1, 2]) }
        #expect(throws: URLEncodedFormEncoder.Failure.self) { try URLEncodedFormEncoder().encode("text") }
    }

    @Test func nilsInCollectionsFollowTheNilEncoding() throws {
        // As in Alamofire: by default a nil element leaves no pair, like any other nil.
        #expect(try URLEncodedFormEncoder().encode(["a": [1, nil, 3]]) == "a%5B%5D=1&a%5B%5D=3")
        #expect(
            try URLEncodedFormEncoder(nilEncoding: .dropValue).encode(["a": [1, nil, 3]])
                == "a%5B%5D=1&a%5B%5D=&a%5B%5D=3"
        )
        // Indexed elements keep their places around a dropped nil.
        #expect(
            try URLEncodedFormEncoder(arrayEncoding: .indexInBrackets).encode(["a": [1, nil, 3]])
                == "a%5B0%5D=1&a%5B2%5D=3"
        )
        #expect(try URLEncodedFormEncoder().encode(["empty": [String]()]) == "")
    }
}

extension URLEncodedFormEncoderTests {
    @Test func nilDictionaryValuesAreLeftOut() throws {
        let values: [String: String?] = ["a": nil, "b": "x"]
        #expect(try URLEncodedFormEncoder().encode(values) == "b=x")
        let nested: [String: [String: Int?]] = ["n": ["x": nil, "y": 1]]
        #expect(try URLEncodedFormEncoder().encode(nested) == "n%5By%5D=1")
    }

    @Test func nilEncodingAppliesToOptionalProperties() throws {
        #expect(try URLEncodedFormEncoder().encode(OnlyOptionals()) == "")
        #expect(try URLEncodedFormEncoder(nilEncoding: .dropValue).encode(OnlyOptionals()) == "age=&nickname=")
        #expect(try URLEncodedFormEncoder(nilEncoding: .null).encode(OnlyOptionals()) == "age=null&nickname=null")
        let custom = URLEncodedFormEncoder.NilEncoding { "none" }
        #expect(try URLEncodedFormEncoder(nilEncoding: custom).encode(OnlyOptionals()) == "age=none&nickname=none")
        let values: [String: String?] = ["a": nil, "b": "x"]
        #expect(try URLEncodedFormEncoder(nilEncoding: .null).encode(values) == "a=null&b=x")
    }

    private struct OnlyOptionals: Encodable {
        var nickname: String? = nil
        var age: Int? = nil
    }

    @Test func keyPathsUseBracketsDotsOrAClosure() throws {
        let value = ["parent": ["child": ["leaf": 1]]]
        #expect(try URLEncodedFormEncoder().encode(value) == "parent%5Bchild%5D%5Bleaf%5D=1")
        #expect(try URLEncodedFormEncoder(keyPathEncoding: .dots).encode(value) == "parent.child.leaf=1")
        let dashed = URLEncodedFormEncoder.KeyPathEncoding { "-\($0)" }
        #expect(try URLEncodedFormEncoder(keyPathEncoding: dashed).encode(value) == "parent-child-leaf=1")
    }

    @Test func customArrayNamesSeeThePlainKeyAndIndex() throws {
        let encoder = URLEncodedFormEncoder(arrayEncoding: .custom { key, index in "\(key)(\(index))" })
        #expect(try encoder.encode(["a b": [1, 2]]) == "a%20b%280%29=1&a%20b%281%29=2")
    }

    @Test func keysCanChangeCase() throws {
        let value = ["userName": 1]
        #expect(try URLEncodedFormEncoder(keyEncoding: .capitalized).encode(value) == "UserName=1")
        #expect(try URLEncodedFormEncoder(keyEncoding: .uppercased).encode(value) == "USERNAME=1")
        #expect(try URLEncodedFormEncoder(keyEncoding: .lowercased).encode(value) == "username=1")
        // Nested keys are converted too.
        #expect(
            try URLEncodedFormEncoder(keyEncoding: .uppercased).encode(["a": ["bC": 1]]) == "A%5BBC%5D=1"
        )
    }

    @Test func datesCanUseAFormatter() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let encoder = URLEncodedFormEncoder(dateEncoding: .formatted(formatter))
        #expect(try encoder.encode(["day": Date(timeIntervalSince1970: 86_400)]) == "day=1970-01-02")
    }

    @Test func allowedCharactersCanBeWidened() throws {
        var allowed = URLEncodedFormEncoder.defaultAllowedCharacters
        allowed.insert(charactersIn: "[]:")
        let encoder = URLEncodedFormEncoder(allowedCharacters: allowed)
        #expect(try encoder.encode(["t": ["a": "10:30"]]) == "t[a]=10:30")
        #expect(try URLEncodedFormEncoder().encode(["t": ["a": "10:30"]]) == "t%5Ba%5D=10%3A30")
    }

    @Test func encoderShorthandsStandForTheirTypes() throws {
        let blank = URLRequest(url: URL(fileURLWithPath: "/"))
        func encoded(_ parameters: [String: Int?], with encoder: some ParameterEncoder) throws -> URLRequest {
            try encoder.encode(parameters, into: blank)
        }
        let sorted = JSONEncoder()
        sorted.outputFormatting = [.sortedKeys]
        #expect(try encoded(["b": 1, "a": 2], with: .json(encoder: sorted)).httpBody == Data(#"{"a":2,"b":1}"#.utf8))
        #expect(try encoded(["a": 1], with: .json).httpBody == Data(#"{"a":1}"#.utf8))
        let nulls = URLEncodedFormEncoder(nilEncoding: .null)
        let query = try encoded(["a": nil], with: .urlEncodedForm(encoder: nulls, destination: .queryString))
        #expect(query.url?.query == "a=null")
        #expect(try encoded(["a": 1], with: .urlEncodedForm).url?.query == "a=1")
    }
}
