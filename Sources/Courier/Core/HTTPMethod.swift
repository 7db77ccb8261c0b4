/// An HTTP request method, such as `GET` or `POST`.
///
/// A struct rather than an enum so any method a server understands can be sent:
/// `HTTPMethod(rawValue: "PROPFIND")`. The standard methods are static members.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// `CONNECT`, to open a tunnel through a proxy.
    public static let connect = HTTPMethod(rawValue: "CONNECT")
    /// `DELETE`, to remove a resource.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `GET`, to read a resource.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`, like `GET` without the body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`, to ask what a resource allows.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `PATCH`, to change part of a resource.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `POST`, to submit data to be processed.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`, to replace a resource.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `QUERY`, a safe request that carries its query in the body.
    public static let query = HTTPMethod(rawValue: "QUERY")
    /// `TRACE`, to echo the request back.
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// The method's name as sent on the wire; methods are case-sensitive.
    public let rawValue: String

    /// Creates a method from its name, e.g. `"PROPFIND"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Whether the method is idempotent (RFC 9110 §9.2.2): repeating it has the effect of sending it
    /// once, so a retry cannot do harm. Retry policies retry only these unless told otherwise.
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options, .trace, .query: return true
        default: return false
        }
    }

    /// Whether a body is usually meaningless for the method, so parameters go in the query
    /// (`GET`, `HEAD`, `DELETE`), as URL-encoded parameter encoders decide by default.
    public var encodesParametersInURL: Bool {
        self == .get || self == .head || self == .delete
    }

    /// Whether the method is a token as RFC 9110 defines one: not empty, no spaces or separators.
    public var isValidToken: Bool {
        !rawValue.isEmpty && rawValue.utf8.allSatisfy(HTTPMethod.isTokenCharacter)
    }

    /// The method's name.
    public var description: String { rawValue }

    /// RFC 9110 `tchar`: `!#$%&'*+-.^_`|~`, digits and letters.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
