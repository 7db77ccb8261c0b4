import CourierHashes
import Foundation

/// One Digest challenge (RFC 7616) read and checked, ready to answer: what the server asked for
/// and the `Authorization` value that answers it for a request.
///
/// Build one from a parsed challenge with ``init(_:)``, which throws when the challenge cannot
/// be answered (no realm, no nonce, an algorithm Courier lacks), then call
/// ``authorization(username:password:method:target:body:nonceCount:clientNonce:)`` for each
/// request it answers. That call is pure: the nonce count comes from a ``NonceCounter`` (a
/// session keeps one for its requests) and the client nonce from ``makeClientNonce(using:)``, so a test can fix
/// both.
///
/// When a server rejects an answer with a new challenge whose ``isStale`` is `true`, the
/// credential was right and only the nonce had expired: answer the new challenge once more
/// without counting the rejection as a failed login (RFC 7616 §3.3).
///
/// The value holds what the server sent (realm, nonce, opaque), never the password; a
/// ``Failure`` names what is wrong without quoting any value.
struct DigestAuthentication: Sendable, Equatable {
    /// The longest realm, nonce or opaque accepted, in bytes. Each is echoed in every answer, so
    /// a server that sends a megabyte would make every request carry it; real ones send tens.
    static let maximumParameterLength = 4096

    /// The protection space's name, shown to users and hashed into every answer.
    let realm: String
    /// The server's nonce, answered until the server sends a new one.
    let nonce: String
    /// Data the server wants back unchanged, if it sent any.
    let opaque: String?
    /// The hash function.
    let algorithm: Algorithm
    /// Whether the algorithm is the `-sess` form, whose first hash also covers the nonces.
    let isSessionAlgorithm: Bool
    /// Whether the challenge named an algorithm; when it did not (RFC 2069 and 2617 servers),
    /// the answer names none either.
    let namesAlgorithm: Bool
    /// The qualities of protection offered, in the server's order; empty when the challenge has
    /// no `qop` (RFC 2069's form, answered without `nc`, `cnonce` or `qop`).
    let qualitiesOfProtection: [QualityOfProtection]
    /// Whether the server said the previous nonce was stale (`stale=true`): the credential it
    /// rejected was right, so answering again with this nonce is not a second try.
    let isStale: Bool
    /// Whether the server asks for the username hashed with the realm (`userhash=true`), so
    /// that it does not travel in the clear.
    let hashesUsername: Bool

    /// Reads a challenge.
    ///
    /// - Throws: ``Failure`` when `challenge` is not `Digest`, lacks a realm or nonce, names an
    ///   algorithm or only qualities of protection Courier does not support, or carries a realm,
    ///   nonce or opaque that is too long or holds control characters (each is echoed in a header).
    init(_ challenge: AuthenticationChallenge) throws(Failure) {
        guard challenge.hasScheme("Digest") else { throw .notDigest }
        guard let realm = challenge.parameter("realm") else { throw .missingRealm }
        guard let nonce = challenge.parameter("nonce"), !nonce.isEmpty else { throw .missingNonce }
        let opaque = challenge.parameter("opaque")
        for value in [realm, nonce, opaque ?? ""] {
            guard value.utf8.count <= Self.maximumParameterLength else { throw .oversizedParameter }
            guard Self.fitsQuotedString(value) else { throw .invalidCharacters }
        }
        self.realm = realm
        self.nonce = nonce
        self.opaque = opaque

        if let token = challenge.parameter("algorithm") {
            guard let (algorithm, isSession) = Algorithm.parse(token) else { throw .unsupportedAlgorithm }
            self.algorithm = algorithm
            isSessionAlgorithm = isSession
            namesAlgorithm = true
        } else {
            algorithm = .md5
            isSessionAlgorithm = false
            namesAlgorithm = false
        }

        if let qop = challenge.parameter("qop") {
            var offered: [QualityOfProtection] = []
            for option in qop.split(separator: ",") {
                let name = option.trimmingCharacters(in: .whitespaces).lowercased()
                if let quality = QualityOfProtection(rawValue: name), !offered.contains(quality) {
                    offered.append(quality)
                }
            }
            // A `qop` naming only options Courier lacks (or none) leaves nothing to answer with;
            // answering in RFC 2069's form instead would ignore what the server asked for.
            guard !offered.isEmpty else { throw .unsupportedQualityOfProtection }
            qualitiesOfProtection = offered
        } else {
            qualitiesOfProtection = []
        }
        isStale = challenge.parameter("stale").map { HTTPHeaders.namesMatch($0, "true") } ?? false
        hashesUsername = challenge.parameter("userhash").map { HTTPHeaders.namesMatch($0, "true") } ?? false
    }

    /// The quality of protection an answer uses: `auth` when offered, `auth-int` when it alone
    /// is offered and the body is at hand to hash, `nil` for RFC 2069's form.
    ///
    /// - Throws: ``Failure/bodyRequired`` when only `auth-int` is offered and `bodyAvailable` is false.
    func qualityOfProtection(bodyAvailable: Bool) throws(Failure) -> QualityOfProtection? {
        if qualitiesOfProtection.isEmpty { return nil }
        // `auth` proves the same credential with no need to hash (or even have) the body; a
        // server that wants the body covered offers `auth-int` alone.
        if qualitiesOfProtection.contains(.authentication) { return .authentication }
        guard bodyAvailable else { throw .bodyRequired }
        return .integrity
    }

    /// The `Authorization` field value (`Digest username="…", …`) answering this challenge for
    /// one request.
    ///
    /// - Parameters:
    ///   - username: The user, sent quoted when it is printable ASCII, hashed when the server
    ///     asked for ``hashesUsername``, else as `username*` in RFC 8187's `UTF-8''…` form.
    ///   - password: The password; it only enters the hashes.
    ///   - method: The request's method.
    ///   - target: The request target exactly as sent: the path and query (`/dir/index.html?a=1`).
    ///   - body: The body, for `auth-int`; `nil` when it cannot be hashed (a stream).
    ///   - nonceCount: How many requests this nonce has answered, this one included (from
    ///     ``NonceCounter/next(for:)``), sent as 8 hexadecimal digits.
    ///   - clientNonce: A fresh random value from ``makeClientNonce(using:)``.
    /// - Throws: ``Failure/bodyRequired`` when only `auth-int` is offered and `body` is `nil`;
    ///   ``Failure/invalidCharacters`` when `target` holds a control character.
    func authorization(
        username: String,
        password: String,
        method: HTTPMethod,
        target: String,
        body: Data?,
        nonceCount: Int,
        clientNonce: String
    ) throws(Failure) -> String {
        guard Self.fitsQuotedString(target), Self.fitsQuotedString(clientNonce) else { throw .invalidCharacters }
        let quality = try qualityOfProtection(bodyAvailable: body != nil)
        let algorithm = algorithm
        func hash(_ text: String) -> String { algorithm.hexDigest(Array(text.utf8)) }

        // RFC 7616 §3.4.2: A1, hashed once more with the nonces for the `-sess` forms.
        var firstHash = hash("\(username):\(realm):\(password)")
        if isSessionAlgorithm {
            firstHash = hash("\(firstHash):\(nonce):\(clientNonce)")
        }
        // §3.4.3: A2, with the body's hash for `auth-int`.
        var second = "\(method.rawValue):\(target)"
        if quality == .integrity, let body {
            second += ":" + algorithm.hexDigest(body)
        }
        let secondHash = hash(second)
        let count = Self.hexadecimalCount(nonceCount)
        let response: String
        if let quality {
            response = hash("\(firstHash):\(nonce):\(count):\(clientNonce):\(quality.rawValue):\(secondHash)")
        } else {
            response = hash("\(firstHash):\(nonce):\(secondHash)")
        }

        var parameters: [String] = []
        if hashesUsername {
            parameters.append("username=" + Self.quoted(hash("\(username):\(realm)")))
        } else if username.utf8.allSatisfy(Self.isPrintableASCII) {
            parameters.append("username=" + Self.quoted(username))
        } else {
            parameters.append("username*=" + Self.extendedValue(username))
        }
        parameters.append("realm=" + Self.quoted(realm))
        parameters.append("uri=" + Self.quoted(target))
        if namesAlgorithm {
            parameters.append("algorithm=" + algorithm.name + (isSessionAlgorithm ? "-sess" : ""))
        }
        parameters.append("nonce=" + Self.quoted(nonce))
        if let quality {
            parameters.append("nc=" + count)
            parameters.append("cnonce=" + Self.quoted(clientNonce))
            parameters.append("qop=" + quality.rawValue)
        } else if isSessionAlgorithm {
            // The `-sess` hash covers the client nonce, so the server needs it even without `qop`.
            parameters.append("cnonce=" + Self.quoted(clientNonce))
        }
        parameters.append("response=" + Self.quoted(response))
        if let opaque {
            parameters.append("opaque=" + Self.quoted(opaque))
        }
        if hashesUsername {
            parameters.append("userhash=true")
        }
        return "Digest " + parameters.joined(separator: ", ")
    }

    /// A client nonce: 16 random bytes as 32 hexadecimal digits, from `generator` (the system's
    /// cryptographically secure one unless a test passes a seeded one).
    static func makeClientNonce(using generator: inout some RandomNumberGenerator) -> String {
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return bytes.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }
        .joined()
    }

    /// A client nonce from the system's cryptographically secure generator.
    static func makeClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return makeClientNonce(using: &generator)
    }

    // MARK: - Pieces

    /// `nc`: the count as 8 lowercase hexadecimal digits (RFC 7616 §3.4), wrapping past 2^32.
    private static func hexadecimalCount(_ count: Int) -> String {
        let digits = String(UInt32(truncatingIfNeeded: count), radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// Whether `value` can be sent as a quoted string: no control character but tab (RFC 9110
    /// §5.6.4 allows none, escaped or not). CR or LF here would split the header.
    private static func fitsQuotedString(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7f) }
    }

    /// Printable ASCII, space and tab: what a quoted username may hold without `username*`.
    private static func isPrintableASCII(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x7e).contains(byte)
    }

    /// `value` as a quoted string, `"` and `\` escaped.
    private static func quoted(_ value: String) -> String {
        var text = "\""
        for character in value.unicodeScalars {
            if character == "\"" || character == "\\" { text.unicodeScalars.append("\\") }
            text.unicodeScalars.append(character)
        }
        return text + "\""
    }

    /// RFC 8187's `ext-value`: `UTF-8''` then the UTF-8 bytes, `attr-char`s as they are and the
    /// rest percent-encoded.
    private static func extendedValue(_ value: String) -> String {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var bytes = Array("UTF-8''".utf8)
        for byte in value.utf8 {
            if isAttributeCharacter(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// RFC 8187 `attr-char`: letters, digits and `!#$&+-.^_`|~`.
    private static func isAttributeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$&+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension DigestAuthentication {
    /// The hash function a challenge names in `algorithm`.
    enum Algorithm: Sendable, Equatable, CaseIterable {
        /// `MD5`, the default when the challenge names none.
        case md5
        /// `SHA-256`.
        case sha256
        /// `SHA-512`: not in RFC 7616's registry, but httpbin offers it and Python's `requests`
        /// answers it (with the whole 64-byte digest).
        case sha512
        /// `SHA-512-256`: FIPS 180-4's SHA-512/256.
        case sha512_256

        /// The name in the `algorithm` parameter, without `-sess`.
        var name: String {
            switch self {
            case .md5: "MD5"
            case .sha256: "SHA-256"
            case .sha512: "SHA-512"
            case .sha512_256: "SHA-512-256"
            }
        }

        /// The preference among algorithms, higher first: SHA-512-256 (RFC 7616's strongest),
        /// SHA-512, SHA-256, then MD5.
        var strength: Int {
            switch self {
            case .md5: 1
            case .sha256: 2
            case .sha512: 3
            case .sha512_256: 4
            }
        }

        /// The algorithm `token` names, compared case-insensitively, and whether it is the
        /// `-sess` form; `nil` for one Courier does not support.
        static func parse(_ token: String) -> (Algorithm, isSession: Bool)? {
            var name = Substring(token)
            var isSession = false
            if name.utf8.count > 5, HTTPHeaders.namesMatch(String(name.suffix(5)), "-sess") {
                name = name.dropLast(5)
                isSession = true
            }
            guard let algorithm = allCases.first(where: { HTTPHeaders.namesMatch(String(name), $0.name) }) else {
                return nil
            }
            return (algorithm, isSession)
        }

        /// The lowercase hexadecimal digest of `bytes`, as Digest writes every hash.
        func hexDigest(_ bytes: some Sequence<UInt8>) -> String {
            switch self {
            case .md5: MD5.hexDigest(of: bytes)
            case .sha256: SHA256.hexDigest(of: bytes)
            case .sha512: SHA512.hexDigest(of: bytes)
            case .sha512_256: SHA512_256.hexDigest(of: bytes)
            }
        }
    }

    /// A quality of protection a challenge offers in `qop`.
    enum QualityOfProtection: String, Sendable, Equatable {
        /// `auth`: the answer covers the method and target.
        case authentication = "auth"
        /// `auth-int`: the answer also covers the body's hash.
        case integrity = "auth-int"
    }

    /// Why a challenge cannot be answered, or an answer cannot be made. Its description is a
    /// fixed name, never a value from the challenge or the credential.
    struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// A fixed short name for the reason, safe for logs.
        let description: String

        private init(_ description: String) {
            self.description = description
        }

        /// The challenge's scheme is not `Digest`.
        static let notDigest = Failure("notDigest")
        /// The challenge has no `realm`.
        static let missingRealm = Failure("missingRealm")
        /// The challenge has no `nonce`, or an empty one.
        static let missingNonce = Failure("missingNonce")
        /// The challenge names an algorithm Courier does not support.
        static let unsupportedAlgorithm = Failure("unsupportedAlgorithm")
        /// The challenge's `qop` offers neither `auth` nor `auth-int`.
        static let unsupportedQualityOfProtection = Failure("unsupportedQualityOfProtection")
        /// The realm, nonce or opaque is longer than ``DigestAuthentication/maximumParameterLength``.
        static let oversizedParameter = Failure("oversizedParameter")
        /// A value to be echoed in the answer holds a control character.
        static let invalidCharacters = Failure("invalidCharacters")
        /// Only `auth-int` is offered and the body cannot be hashed.
        static let bodyRequired = Failure("bodyRequired")
    }

    /// How many requests each nonce has answered, for `nc`: 1 for a nonce's first answer, 2 for
    /// its second, and so on, for the ``maximumNonces`` nonces answered most recently. A session keeps one
    /// for all its requests (``ChallengeResponder``), so that a server handing the same nonce to
    /// several `401`s (time-based nonces, requests in parallel) sees its count rise and can tell a
    /// replayed answer from a new one (RFC 7616 §3.4); a nonce seen before counts on from where
    /// it was.
    struct NonceCounter: Sendable, Equatable {
        /// The most nonces counted at once; the least recently answered is forgotten to make
        /// room. A server that sends a new nonce with every challenge must not make the counter
        /// grow without bound (each nonce is at most ``DigestAuthentication/maximumParameterLength``).
        static let maximumNonces = 64

        private var counts: [String: Int] = [:]
        /// The nonces counted, least recently answered first.
        private var order: [String] = []

        /// A counter that has counted nothing.
        init() {}

        /// How many nonces it counts now.
        var nonceCount: Int { order.count }

        /// Counts one more answer with `nonce` and returns its count.
        mutating func next(for nonce: String) -> Int {
            if let count = counts[nonce] {
                counts[nonce] = count + 1
                if let position = order.firstIndex(of: nonce) {
                    order.remove(at: position)
                    order.append(nonce)
                }
                return count + 1
            }
            if order.count >= Self.maximumNonces {
                counts[order.removeFirst()] = nil
            }
            order.append(nonce)
            counts[nonce] = 1
            return 1
        }
    }
}
