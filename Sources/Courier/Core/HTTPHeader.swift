import Foundation

/// One HTTP header field: a name and a value.
///
/// Static helpers build the common ones, e.g. `.authorization(bearerToken:)` or
/// `.contentType("application/json")`.
public struct HTTPHeader: Hashable, Sendable, CustomStringConvertible {
    /// The field name, e.g. `Content-Type`. Compared case-insensitively by ``HTTPHeaders``.
    public let name: String
    /// The field value.
    public let value: String

    /// Creates a header from a name and a value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `name: value`, with the value of a credential-bearing header redacted.
    public var description: String {
        "\(name): \(isSensitive ? "***" : value)"
    }

    /// Whether the value carries credentials (`Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie`) and so stays out of logs and descriptions unless asked for.
    public var isSensitive: Bool {
        HTTPHeader.sensitiveNames.contains(name.lowercased())
    }

    private static let sensitiveNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// Why the header cannot be sent, or `nil` if it can, following RFC 9110 (section 5): the
    /// name must be a token, and the value only visible characters, spaces and tabs
    /// (`field-vchar`, which includes bytes above 0x7F, `obs-text`). A control character (CR or
    /// LF above all, which would let the value forge further headers or a second request; NUL;
    /// DEL) makes it invalid. Space or tab at either end is allowed: it is trimmed on receipt.
    ///
    /// The reason names the header and says where the value went wrong, by byte offset; it never
    /// holds the value, which may be a credential.
    public var invalidityReason: String? {
        Self.invalidityReason(name: name, value: value)
    }

    /// The check behind ``invalidityReason``, on a name and a value as given: the entry point
    /// for tests and fuzzing.
    static func invalidityReason(name: String, value: String) -> String? {
        // Most headers are valid: one pass over contiguous bytes says so, and the reason is
        // worked out only for a header that is not.
        let nameIsValid = name.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.isEmpty && bytes.allSatisfy(HTTPMethod.isTokenCharacter)
        }
        let valueIsValid = value.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isFieldValueByte) }
        if nameIsValid == true, valueIsValid == true { return nil }
        if name.isEmpty { return "a header name is empty" }
        if let offset = name.utf8.firstIndex(where: { !HTTPMethod.isTokenCharacter($0) }) {
            let position = name.utf8.distance(from: name.utf8.startIndex, to: offset)
            return "the header name \(quotedForMessage(name)) is not a valid token "
                + "(byte \(position) is not allowed in a name)"
        }
        var position = 0
        for byte in value.utf8 {
            if !isFieldValueByte(byte) {
                let what = byte == 13 || byte == 10 || byte == 0 ? "CR, LF or NUL" : "a control character"
                return "the value of header \(quotedForMessage(name)) contains \(what) "
                    + "(0x\(String(byte, radix: 16, uppercase: true))) at byte \(position)"
            }
            position += 1
        }
        return nil
    }

    /// Whether `byte` may appear in a field value: `field-vchar` (`VCHAR` 0x21-0x7E and
    /// `obs-text` 0x80-0xFF), space or horizontal tab.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte >= 0x20 ? byte != 0x7F : byte == 0x09
    }

    /// `name` quoted for an error message: at most 64 bytes, anything but printable ASCII
    /// escaped, so that a name built from bad input cannot write to a terminal.
    private static func quotedForMessage(_ name: String) -> String {
        var quoted = "\""
        for byte in name.utf8.prefix(64) {
            if (0x20..<0x7F).contains(byte), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                quoted.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                quoted += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return quoted + (name.utf8.count > 64 ? "…\"" : "\"")
    }
}

extension HTTPHeader {
    /// `Accept`, the media types the client can use, e.g. `application/json`.
    public static func accept(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept", value: value)
    }

    /// `Accept-Charset`.
    public static func acceptCharset(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Charset", value: value)
    }

    /// `Accept-Encoding`, the content codings the client can decode.
    public static func acceptEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Encoding", value: value)
    }

    /// `Accept-Language`, e.g. `en-GB;q=1.0, fr;q=0.9`.
    public static func acceptLanguage(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Language", value: value)
    }

    /// `Authorization` with HTTP Basic credentials (RFC 7617), UTF-8 encoded.
    ///
    /// As in Alamofire, the value is written whatever the credentials hold; a `username` with a
    /// `:` reaches the server as another user name and password (it splits at the first). A
    /// credential given to ``Request/authenticate(username:password:persistence:)`` or in the
    /// URL's user info is checked instead, and such a request fails with
    /// ``CourierError/Kind/credentialEncodingFailed``.
    public static func authorization(username: String, password: String) -> HTTPHeader {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        return authorization("Basic \(credentials)")
    }

    /// `Authorization: Bearer <token>` (RFC 6750).
    public static func authorization(bearerToken: String) -> HTTPHeader {
        authorization("Bearer \(bearerToken)")
    }

    /// `Authorization` with a value you formed yourself.
    public static func authorization(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Authorization", value: value)
    }

    /// `Content-Disposition`, e.g. `form-data; name="file"; filename="a.txt"`.
    public static func contentDisposition(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Disposition", value: value)
    }

    /// `Content-Encoding`, the coding applied to the body.
    public static func contentEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Encoding", value: value)
    }

    /// `Content-Type`, the body's media type.
    public static func contentType(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Type", value: value)
    }

    /// `User-Agent`.
    public static func userAgent(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "User-Agent", value: value)
    }
}

extension HTTPHeader {
    /// The codings both transports decode for you: `gzip;q=1.0, deflate;q=0.9`.
    public static let defaultAcceptEncoding = acceptEncoding("gzip;q=1.0, deflate;q=0.9")

    /// The system's preferred languages, at most six, with falling quality values.
    public static let defaultAcceptLanguage: HTTPHeader = {
        let languages = Locale.preferredLanguages.prefix(6).enumerated().map { index, language in
            let quality = 1.0 - Double(index) * 0.1
            return "\(language);q=\(String(format: "%.1f", quality))"
        }
        return acceptLanguage(languages.isEmpty ? "en;q=1.0" : languages.joined(separator: ", "))
    }()

    /// Alamofire's form, `<app>/<version> (<bundle>; build:<build>; <system> <version>)
    /// Courier/<version>`, e.g. `MyApp/2.1 (org.example.MyApp; build:42; iOS 17.4.0)
    /// Courier/0.1.0`. Without a bundle (a server, a command-line tool, Linux) the executable's
    /// name stands for the app and the bundle, and the rest is `Unknown`, as in Alamofire:
    /// `my-server/Unknown (my-server; build:Unknown; Linux 6.1.0) Courier/0.1.0`.
    public static let defaultUserAgent: HTTPHeader = {
        let info = Bundle.main.infoDictionary ?? [:]
        let processInfo = ProcessInfo.processInfo
        let executable =
            (info["CFBundleExecutable"] as? String)
            ?? processInfo.arguments.first?.split(separator: "/").last.map(String.init)
            ?? processInfo.processName
        let version = processInfo.operatingSystemVersion
        #if os(Linux)
        let system = "Linux"
        #elseif os(iOS)
        let system = "iOS"
        #elseif os(macOS)
        let system = "macOS"
        #elseif os(tvOS)
        let system = "tvOS"
        #elseif os(watchOS)
        let system = "watchOS"
        #elseif os(visionOS)
        let system = "visionOS"
        #else
        let system = "Unknown"
        #endif
        return userAgent(
            composedUserAgent(
                executable: executable,
                appVersion: info["CFBundleShortVersionString"] as? String,
                bundle: info["CFBundleIdentifier"] as? String,
                build: info["CFBundleVersion"] as? String,
                system: "\(system) \(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
            )
        )
    }()

    /// The `User-Agent` value from its parts, each made safe for its place: the product name and
    /// version keep only token characters (a bundle name may hold spaces), and the comment drops
    /// parentheses, backslashes and control characters, so no value can end the comment early or
    /// break the header line.
    static func composedUserAgent(
        executable: String,
        appVersion: String?,
        bundle: String?,
        build: String?,
        system: String
    ) -> String {
        func token(_ text: String) -> String {
            String(
                text.map { character -> Character in
                    guard let ascii = character.asciiValue, HTTPMethod.isTokenCharacter(ascii), character != "/" else {
                        return "-"
                    }
                    return character
                }
            )
        }
        func commentText(_ text: String) -> String {
            String(
                text.unicodeScalars.map { scalar -> Character in
                    let isVisibleASCII = scalar.value >= 0x20 && scalar.value < 0x7F
                    guard isVisibleASCII, !"()\\;".unicodeScalars.contains(scalar) else { return "-" }
                    return Character(scalar)
                }
            )
        }
        let product = token(executable).isEmpty ? "Courier" : token(executable)
        let productVersion = appVersion.map(token).flatMap { $0.isEmpty ? nil : $0 } ?? "Unknown"
        let bundleName = bundle.map(commentText).flatMap { $0.isEmpty ? nil : $0 } ?? product
        let buildNumber = build.map(commentText).flatMap { $0.isEmpty ? nil : $0 } ?? "Unknown"
        return "\(product)/\(productVersion) (\(bundleName); build:\(buildNumber); \(commentText(system))) "
            + "Courier/\(CourierVersion.current)"
    }
}
