import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import CourierTestServer

/// One request and its answer, made with plain AsyncHTTPClient (no Courier), for testing the server.
struct Exchange: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var json: JSONValue? { JSONValue.parse(body) }
    var text: String { String(decoding: body, as: UTF8.self) }

    /// A client that neither follows redirects nor decompresses, so tests see what the server sent.
    static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: configuration(decompression: .disabled)
    )

    /// A client like ``client`` that also decodes `gzip` and `deflate` bodies.
    static let decompressingClient = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: configuration(decompression: .enabled(limit: .none))
    )

    /// Many suites run at once and share one client per host, so a request can wait for a pooled
    /// connection while slow routes (`/delay`, `/drip`) hold the others. AsyncHTTPClient fails a
    /// request that waits longer than the connect timeout (10 s by default), which a loaded CI
    /// machine exceeded; a larger pool and the same 30 s as the request timeout leave room.
    private static func configuration(decompression: HTTPClient.Decompression) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(30)),
            decompression: decompression
        )
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32
        return configuration
    }

    /// Sends a request to `base` + `path` and collects the whole answer (30 s timeout: generous,
    /// so a run under ThreadSanitizer on a loaded machine does not time out).
    static func make(
        _ base: URL,
        _ path: String,
        method: HTTPMethod = .GET,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: TimeAmount = .seconds(30),
        decompressing: Bool = false
    ) async throws -> Exchange {
        var request = HTTPClientRequest(url: base.absoluteString + path)
        request.method = method
        request.headers.add(contentsOf: headers)
        if let body { request.body = .bytes(body) }
        let response = try await (decompressing ? decompressingClient : client).execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 256 * 1024 * 1024)
        return Exchange(
            status: Int(response.status.code),
            headers: response.headers,
            body: Array(bytes.readableBytesView)
        )
    }
}

/// Real httpbin, when `.ci/run` (or you) started one and exported `HTTPBIN_URL`.
enum Httpbin {
    static let url: URL? = ProcessInfo.processInfo.environment["HTTPBIN_URL"].flatMap { URL(string: $0) }

    /// `host:port` of a URL, as it appears in echoed `url` and `Host` fields.
    static func authority(of url: URL) -> String {
        "\(url.host ?? "127.0.0.1"):\(url.port ?? 80)"
    }
}

/// Makes the same request to the embedded server and, when `HTTPBIN_URL` is set, to real httpbin,
/// then checks that both answer alike: same status, same values for `headers`, and, for JSON
/// bodies, the same document once each server's own `host:port` is written as `{authority}` and
/// the members at `ignoring` paths are dropped.
///
/// - Returns: The embedded server's answer, for route-specific checks.
@discardableResult
func expectSameAsHttpbin(
    _ server: TestServer,
    _ path: String,
    method: HTTPMethod = .GET,
    headers requestHeaders: [(String, String)] = [],
    body: [UInt8]? = nil,
    comparingHeaders headerNames: [String] = ["Content-Type"],
    comparingBody: BodyComparison = .json,
    ignoring ignoredPaths: [[String]] = [],
    decompressing: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Exchange {
    let ours = try await Exchange.make(
        server.baseURL,
        path,
        method: method,
        headers: requestHeaders,
        body: body,
        decompressing: decompressing
    )
    guard let httpbin = Httpbin.url else { return ours }
    let theirs = try await Exchange.make(
        httpbin,
        path,
        method: method,
        headers: requestHeaders,
        body: body,
        decompressing: decompressing
    )
    #expect(ours.status == theirs.status, "status of \(method) \(path)", sourceLocation: sourceLocation)
    for name in headerNames {
        #expect(
            ours.headers[name] == theirs.headers[name],
            "header \(name) of \(method) \(path)",
            sourceLocation: sourceLocation
        )
    }
    switch comparingBody {
    case .none:
        break
    case .bytes:
        #expect(ours.body == theirs.body, "body of \(method) \(path)", sourceLocation: sourceLocation)
    case .json:
        let normalizedOurs = ours.json.map {
            normalize($0, authority: Httpbin.authority(of: server.baseURL), ignoring: ignoredPaths)
        }
        let normalizedTheirs = theirs.json.map {
            normalize($0, authority: Httpbin.authority(of: httpbin), ignoring: ignoredPaths)
        }
        #expect(normalizedOurs != nil, "our body of \(method) \(path) is JSON", sourceLocation: sourceLocation)
        #expect(normalizedOurs == normalizedTheirs, "JSON of \(method) \(path)", sourceLocation: sourceLocation)
    }
    return ours
}

/// How ``expectSameAsHttpbin(_:_:method:headers:body:comparingHeaders:comparingBody:ignoring:decompressing:sourceLocation:)``
/// compares bodies.
enum BodyComparison {
    case none, bytes, json
}

/// The document with `authority` replaced by `{authority}` in every string and the given paths removed.
func normalize(_ value: JSONValue, authority: String, ignoring paths: [[String]]) -> JSONValue {
    var value = replacingAuthority(value, authority)
    for path in paths { value = removing(path[...], from: value) }
    return value
}

private func replacingAuthority(_ value: JSONValue, _ authority: String) -> JSONValue {
    switch value {
    case .string(let text): return .string(text.replacingOccurrences(of: authority, with: "{authority}"))
    case .array(let elements): return .array(elements.map { replacingAuthority($0, authority) })
    case .object(let members): return .object(members.mapValues { replacingAuthority($0, authority) })
    default: return value
    }
}

private func removing(_ path: ArraySlice<String>, from value: JSONValue) -> JSONValue {
    guard let first = path.first, case .object(var members) = value else { return value }
    if path.count == 1 {
        members[first] = nil
    } else if let member = members[first] {
        members[first] = removing(path.dropFirst(), from: member)
    }
    return .object(members)
}
