import Courier
import CourierTestServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redirects, cookies, Digest and the cache against the embedded server and, in CI, real
/// httpbin (`HTTPBIN_URL`): the same client code must get the same answers from both.
@Suite struct HttpbinComparisonTests {
    private struct Echo: Decodable, Sendable {
        let url: String
    }

    private struct Authenticated: Decodable, Sendable {
        let authenticated: Bool
        let user: String
    }

    private static var bases: [String] {
        ProcessInfo.processInfo.environment["HTTPBIN_URL"].map { [$0] } ?? []
    }

    @Test(arguments: TransportKind.allCases)
    func redirectsCookiesDigestAndCacheAnswerAlike(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            for base in [server.baseURL.absoluteString] + Self.bases {
                let session = transport.makeSession {
                    $0.credentialStorage = nil
                    $0.httpCache = .memory()
                }
                // Redirect chains, relative and absolute, and a 307 that keeps the method.
                for path in ["/redirect/3", "/absolute-redirect/2", "/relative-redirect/2"] {
                    let request = session.request(base + path)
                    let echo = try await request.validate().serializingDecodable(Echo.self).value
                    #expect(echo.url.hasSuffix("/get"), "\(base)\(path)")
                    #expect(request.redirects.count == Int(path.suffix(1)), "\(base)\(path)")
                }
                let kept = try await session.request(
                    base + "/redirect-to?url=/put&status_code=307",
                    method: .put
                ).validate().serializingDecodable(Echo.self).value
                #expect(kept.url.hasSuffix("/put"), "\(base)")

                // A cookie set on a redirect reaches its next request and the ones after.
                let cookies = try await session.request(base + "/cookies/set?flavour=oat")
                    .serializingDecodable([String: [String: String]].self).value
                #expect(cookies["cookies"]?["flavour"] == "oat", "\(base)")

                // Digest, answered by Courier.
                for algorithm in ["MD5", "SHA-256"] {
                    let answer = try await session.request(base + "/digest-auth/auth/ada/lovelace/\(algorithm)")
                        .authenticate(username: "ada", password: "lovelace", persistence: .none)
                        .validate().serializingDecodable(Authenticated.self).value
                    #expect(answer.authenticated, "\(base) \(algorithm)")
                }

                // The cache: max-age serves from the store; /cache and /etag revalidate with a 304.
                for path in ["/cache/60", "/cache", "/etag/courier"] {
                    let first = session.request(base + path)
                    _ = try await first.validate().serializingData().value
                    let second = session.request(base + path)
                    _ = try await second.validate().serializingData().value
                    #expect(first.metrics?.responseSource == .network, "\(base)\(path)")
                    let expected: ResponseSource = path == "/cache/60" ? .cache : .revalidatedCache
                    #expect(second.metrics?.responseSource == expected, "\(base)\(path)")
                }
                await session.invalidate()
            }
        }
    }
}
