import AsyncHTTPClient
import Courier
import CourierTestServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The jar against the test server's httpbin cookie routes: what `/cookies/set` sets comes back
/// from `/cookies`.
@Suite struct CookieJarTestServerTests {
    /// What `/cookies` echoes.
    private struct Echo: Decodable {
        var cookies: [String: String]
    }

    /// `/cookies/set?…` answers a 302 with one `Set-Cookie` per cookie (read here with a client
    /// that does not follow redirects); the jar's header for `/cookies` then carries them all.
    @Test(arguments: TransportKind.allCases)
    func storesWhatTheServerSetsAndSendsItBack(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let setURL = server.url("/cookies/set?session=abc123&theme=dark")
            let setResult = await Result {
                try await client.execute(HTTPClientRequest(url: setURL.absoluteString), timeout: .seconds(30))
            }
            try await client.shutdown()
            let setResponse = try setResult.get()
            #expect(setResponse.status == .found)
            let fields = setResponse.headers["Set-Cookie"]
            #expect(fields.count == 2)

            let jar = CookieJar()
            jar.store(setCookieFields: fields, from: setURL)
            let cookiesURL = server.url("/cookies")
            let header = try #require(jar.cookieHeader(for: cookiesURL))
            #expect(jar.cookieHeader(for: server.url("/cookies")) == header)

            let session = transport.makeSession()
            let echo = try await session.request(cookiesURL, headers: ["Cookie": header])
                .validate()
                .serializingDecodable(Echo.self).value
            await session.invalidate()
            #expect(echo.cookies == ["session": "abc123", "theme": "dark"])
        }
    }

    /// A session keeping its cookies in Foundation's storage through the adapter, on either
    /// transport: a response setting 200 cookies leaves the newest its limit allows, and those
    /// go back on the redirect to `/cookies`.
    @Test(arguments: TransportKind.allCases)
    func anAdaptedFoundationStorageKeepsTheNewestWithinItsLimits(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let storage = try #require(URLSessionConfiguration.ephemeral.httpCookieStorage)
            let adapter = HTTPCookieStorageAdapter(storage, limits: CookieJar.Limits(cookiesPerDomain: 5))
            let session = transport.makeSession { $0.cookieStorage = adapter }
            let query = (0..<200).map { "c\($0)=\($0)" }.joined(separator: "&")
            let echo = try await session.request(server.url("/cookies/set?" + query))
                .validate()
                .serializingDecodable(Echo.self).value
            await session.invalidate()
            let newest = Dictionary(uniqueKeysWithValues: (195..<200).map { ("c\($0)", "\($0)") })
            #expect(echo.cookies == newest)
            #expect(storage.cookies?.count == 5)
        }
    }
}

extension Result where Failure == any Error {
    /// The outcome of `body`, so that cleanup can run before a failure is rethrown.
    fileprivate init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
