import Foundation

/// An HTTP Archive (HAR 1.2): requests and responses as browsers' developer tools and proxies
/// save them, read and written as JSON.
///
/// ``HARRecorder`` makes one from a session's traffic; `StubTransport(replaying:)` serves one back
/// in tests. The fields are HAR 1.2's required ones (and the optional `postData`,
/// `content.text` and `content.encoding`); other tools' extra fields are ignored when reading.
public struct HARArchive: Codable, Sendable, Equatable {
    /// The archive's one top-level field.
    public var log: Log

    /// An archive of `entries`, made by Courier.
    public init(entries: [Entry] = []) {
        log = Log(version: "1.2", creator: Creator(name: "Courier", version: "1"), entries: entries)
    }

    /// Reads an archive from HAR's JSON.
    public init(data: Data) throws {
        self = try JSONDecoder().decode(HARArchive.self, from: data)
    }

    /// The archive as HAR's JSON, keys sorted so that two recordings of the same traffic compare.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The archive's `log` object.
    public struct Log: Codable, Sendable, Equatable {
        /// HAR's version: `1.2`.
        public var version: String
        /// What made the archive.
        public var creator: Creator
        /// The exchanges, in the order they ended.
        public var entries: [Entry]
    }

    /// The program that made an archive.
    public struct Creator: Codable, Sendable, Equatable {
        /// The program's name (`Courier`).
        public var name: String
        /// Its version.
        public var version: String
    }

    /// One request and its response.
    public struct Entry: Codable, Sendable, Equatable {
        /// When the request started, in ISO 8601 with milliseconds.
        public var startedDateTime: String
        /// Milliseconds from the request's start to the response's end.
        public var time: Double
        /// What was sent.
        public var request: Request
        /// What came back.
        public var response: Response
        /// Always empty: Courier's cache says where an answer came from in `comment`.
        public var cache: Cache
        /// Where the time went.
        public var timings: Timings
        /// `courier: answered from the cache` and the like, when the answer did not come from
        /// the network.
        public var comment: String?
    }

    /// A name and a value: a header or a query item.
    public struct NameValue: Codable, Sendable, Equatable {
        /// The header's or query item's name.
        public var name: String
        /// Its value (`REDACTED` for a credential not recorded).
        public var value: String

        /// A name and a value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What was sent.
    public struct Request: Codable, Sendable, Equatable {
        /// The method (`GET`).
        public var method: String
        /// The URL, as sent.
        public var url: String
        /// `HTTP/1.1`, `HTTP/2`.
        public var httpVersion: String
        /// Always empty: cookies are in `headers` (redacted unless recorded with credentials).
        public var cookies: [NameValue]
        /// The headers, in order.
        public var headers: [NameValue]
        /// The URL's query items.
        public var queryString: [NameValue]
        /// The body, when it was in memory.
        public var postData: PostData?
        /// Unknown: `-1`.
        public var headersSize: Int
        /// The body's length, or `-1` when it was not in memory (a file, a stream).
        public var bodySize: Int
    }

    /// A request body.
    public struct PostData: Codable, Sendable, Equatable {
        /// The body's `Content-Type`, or empty.
        public var mimeType: String
        /// The body as text, or in base64 when `encoding` says so (HAR 1.2 has no `encoding`
        /// here; Courier writes it as `content` does, and reads either).
        public var text: String
        /// `base64` when ``text`` is base64, else `nil`.
        public var encoding: String?
    }

    /// What came back.
    public struct Response: Codable, Sendable, Equatable {
        /// The status code.
        public var status: Int
        /// The status's usual phrase.
        public var statusText: String
        /// `HTTP/1.1`, `HTTP/2`.
        public var httpVersion: String
        /// Always empty: cookies are in `headers` (redacted unless recorded with credentials).
        public var cookies: [NameValue]
        /// The headers, in order.
        public var headers: [NameValue]
        /// The body.
        public var content: Content
        /// The `Location` of a redirect, else empty.
        public var redirectURL: String
        /// Unknown: `-1`.
        public var headersSize: Int
        /// The body's length as received, or `-1` when unknown.
        public var bodySize: Int
    }

    /// A response body.
    public struct Content: Codable, Sendable, Equatable {
        /// The body's length.
        public var size: Int
        /// The response's `Content-Type`, or empty.
        public var mimeType: String
        /// The body, when recorded: as text, or base64 when ``encoding`` is `base64`.
        public var text: String?
        /// `base64` when ``text`` is base64, else `nil`.
        public var encoding: String?
        /// Why the body is missing or cut short (over the recorder's limit, not kept).
        public var comment: String?
    }

    /// HAR's cache object; Courier leaves it empty.
    public struct Cache: Codable, Sendable, Equatable {}

    /// Where an exchange's time went, in milliseconds; `-1` where unknown.
    public struct Timings: Codable, Sendable, Equatable {
        /// Waiting for a connection: unknown to Courier, `-1`.
        public var blocked: Double
        /// Resolving the name: `-1`.
        public var dns: Double
        /// Connecting: `-1`.
        public var connect: Double
        /// The TLS handshake: `-1`.
        public var ssl: Double
        /// Sending: `0`, counted in ``wait``.
        public var send: Double
        /// From the start to the response's first byte.
        public var wait: Double
        /// From the first byte to the last.
        public var receive: Double
    }
}

extension HARArchive.Content {
    /// The body's bytes, when recorded.
    public var data: Data? {
        guard let text else { return nil }
        return encoding == "base64" ? Data(base64Encoded: text) : Data(text.utf8)
    }
}

extension HARArchive.PostData {
    /// The body's bytes.
    public var data: Data? { encoding == "base64" ? Data(base64Encoded: text) : Data(text.utf8) }
}
