import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's HTTP cache in front of both transports, against the test server's `/cached/:key`
/// (which counts the requests that reach it).
@Suite struct HTTPCacheSessionTests {
    private struct Echo: Decodable, Sendable {
        let key: String
        let hit: Int
        let varied: String
    }

    private static func session(_ transport: TransportKind) -> Session {
        transport.makeSession { $0.httpCache = .memory() }
    }

    private static func fetch(
        _ session: Session,
        _ url: URL,
        headers: HTTPHeaders = [:],
        mode: RequestCacheMode = .default
    ) async throws -> (echo: Echo, source: ResponseSource?) {
        let request = session.request(url, headers: headers).cache(mode).validate()
        let echo = try await request.serializingDecodable(Echo.self).value
        return (echo, request.metrics?.responseSource)
    }

    @Test(arguments: TransportKind.allCases)
    func aFreshResponseIsServedWithoutTheNetwork(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "fresh-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D60")
            let first = try await Self.fetch(session, url)
            #expect(first.echo.hit == 1 && first.source == .network)
            let second = try await Self.fetch(session, url)
            #expect(second.echo.hit == 1, "the stored body")
            #expect(second.source == .cache)
            #expect(server.attempts(forKey: key) == 1)
            // The query is part of the key: another query goes to the network.
            let other = try await Self.fetch(session, server.url("/cached/\(key)?cache-control=max-age%3D60&x=1"))
            #expect(other.echo.hit == 2)
            // reload and noStore skip the stored response.
            #expect(try await Self.fetch(session, url, mode: .reload).echo.hit == 3)
            #expect(try await Self.fetch(session, url, mode: .noStore).echo.hit == 4)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStaleResponseIsRevalidatedAndA304AnswersWithTheStoredBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "etag-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=no-cache&etag=v1")
            let first = try await Self.fetch(session, url)
            #expect(first.echo.hit == 1 && first.source == .network)
            let second = try await Self.fetch(session, url)
            #expect(second.echo.hit == 1, "the stored body after the 304")
            #expect(second.source == .revalidatedCache)
            #expect(server.attempts(forKey: key) == 2, "revalidated with the network")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func varyKeepsVariantsApart(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "vary-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D60&vary=X-Flavour")
            let oat = try await Self.fetch(session, url, headers: ["X-Flavour": "oat"])
            #expect(oat.echo.varied == "oat")
            let soy = try await Self.fetch(session, url, headers: ["X-Flavour": "soy"])
            #expect(soy.echo.varied == "soy" && soy.source == .network)
            let soyAgain = try await Self.fetch(session, url, headers: ["X-Flavour": "soy"])
            #expect(soyAgain.source == .cache && soyAgain.echo.varied == "soy")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func onlyIfCachedAnswers504WithNothingStoredAndForceCacheTakesAStaleOne(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "only-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D0")
            let missing = await session.request(url).cache(.onlyIfCached).serializingData(emptyResponseCodes: [504])
                .response
            #expect(missing.head?.statusCode == 504)
            #expect(server.attempts(forKey: key) == 0)
            _ = try await Self.fetch(session, url)
            let forced = try await Self.fetch(session, url, mode: .forceCache)
            #expect(forced.source == .cache && forced.echo.hit == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aPostInvalidatesTheURL(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "post-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D60")
            _ = try await Self.fetch(session, url)
            _ = await session.request(url, method: .post).serializingData().response
            let after = try await Self.fetch(session, url)
            #expect(after.source == .network, "the POST removed the stored response")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func staleIfErrorAnswersWithTheStoredResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "sie-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D0%2C%20stale-if-error%3D60&fail-after=1")
            _ = try await Self.fetch(session, url)
            let fallback = try await Self.fetch(session, url)
            #expect(fallback.echo.hit == 1, "the stored response instead of the 503")
            #expect(fallback.source == .cache)
            #expect(server.attempts(forKey: key) == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDiskCacheSurvivesANewSession(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let key = "disk-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D60")
            let first = transport.makeSession { $0.httpCache = try? .disk(directory: directory) }
            _ = try await Self.fetch(first, url)
            await first.invalidate()
            let second = transport.makeSession { $0.httpCache = try? .disk(directory: directory) }
            let again = try await Self.fetch(second, url)
            #expect(again.source == .cache && again.echo.hit == 1)
            await second.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func staleWhileRevalidateAnswersAtOnceAndRefreshesOnce(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "swr-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D0%2C%20stale-while-revalidate%3D60")
            _ = try await Self.fetch(session, url)
            let stale = try await Self.fetch(session, url)
            #expect(stale.source == .cache && stale.echo.hit == 1, "the stale response, at once")
            // The refresh reaches the server in the background: two requests in all (the
            // second fetch sent none), or this throws after 30 s.
            try await server.waitForRequests(2, timeout: .seconds(30))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases, [false, true])
    func aBackgroundRefreshStoresTheCookiesItsResponseSets(transport: TransportKind, onDisk: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-swr-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let cookies = SignallingCookieStorage()
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession {
                $0.httpCache = onDisk ? try? .disk(directory: directory) : .memory()
                $0.cookieStorage = cookies
            }
            let key = "swr-cookie-\(transport.rawValue)-\(onDisk)"
            let url = server.url(
                "/cached/\(key)?cache-control=max-age%3D0%2C%20stale-while-revalidate%3D60&set-cookie=seen%3D%7Bhit%7D"
            )
            _ = try await Self.fetch(session, url)
            #expect(cookies.cookieHeader(for: url) == "seen=1")
            let stale = try await Self.fetch(session, url)
            #expect(stale.source == .cache)
            // The refresh's response (the server's second) set `seen=2`, though no request read it.
            let stored = await value(within: hangLimit) { await cookies.waitForField("seen=2") }
            #expect(stored == true)
            #expect(cookies.cookieHeader(for: url) == "seen=2")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func a304ForAnotherVersionSendsTheRequestAgainAsItWasMade(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "mismatch-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=no-cache&etag=v1&not-modified-etag=v2")
            _ = try await Self.fetch(session, url)
            let again = try await Self.fetch(session, url)
            #expect(again.echo.hit == 3, "the 304 (hit 2) was for another version: sent again")
            #expect(again.source == .network)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aResponseToOneCredentialIsNeverServedToAnother(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "auth-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=public%2C%20max-age%3D60")
            let ada = try await Self.fetch(session, url, headers: ["Authorization": "Bearer ada"])
            #expect(ada.source == .network)
            let grace = try await Self.fetch(session, url, headers: ["Authorization": "Bearer grace"])
            #expect(grace.source == .network && grace.echo.hit == 2)
            let nobody = try await Self.fetch(session, url)
            #expect(nobody.source == .network && nobody.echo.hit == 3)
            let adaAgain = try await Self.fetch(session, url, headers: ["Authorization": "Bearer ada"])
            #expect(adaAgain.source == .network || adaAgain.echo.hit == 1, "only ada's own, if kept")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStoredResponseSetsNoCookieAgain(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let jar = CookieJar()
            let session = transport.makeSession {
                $0.httpCache = .memory()
                $0.cookieStorage = jar
            }
            let key = "cookie-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D60&set-cookie=session%3Dold")
            _ = try await Self.fetch(session, url)
            #expect(jar.allCookies.map(\.name) == ["session"])
            jar.removeAll()
            let cached = try await Self.fetch(session, url)
            #expect(cached.source == .cache)
            #expect(jar.allCookies.isEmpty, "the old cookie did not come back from the store")
            await session.invalidate()
        }
    }

    /// A `HEAD` request's `200` updates the stored `GET` response when it names the same
    /// representation, and removes it when it names another (RFC 9111 §4.3.5).
    @Test(arguments: TransportKind.allCases)
    func aHeadResponseFreshensOrRemovesTheStoredGet(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let key = "head-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=max-age%3D60&etag=v1")
            #expect(try await Self.fetch(session, url).source == .network)
            // The same representation: the stored GET stays. (`reload`: the stored HEAD response
            // would answer the second HEAD without the network.)
            let same = await session.request(url, method: .head, headers: ["X-Test-ETag": "v1"]).cache(.reload)
                .serializingData()
                .response
            #expect(same.head?.statusCode == 200)
            let kept = try await Self.fetch(session, url)
            #expect(kept.source == .cache && kept.echo.hit == 1)
            // Another one: the stored GET is out of date, and the next GET goes to the network.
            let changed = await session.request(url, method: .head, headers: ["X-Test-ETag": "v2"]).cache(.reload)
                .serializingData().response
            #expect(changed.head?.statusCode == 200)
            let refetched = try await Self.fetch(session, url)
            #expect(refetched.source == .network, "the HEAD response's other ETag left the old GET stored")
            #expect(server.attempts(forKey: key) == 4)
            await session.invalidate()
        }
    }

    /// A `304`'s own `Set-Cookie` is kept, though the stored response it revalidates never
    /// sets one again.
    @Test(arguments: TransportKind.allCases)
    func aRevalidationsOwnCookieIsKept(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let jar = CookieJar()
            let session = transport.makeSession {
                $0.httpCache = .memory()
                $0.cookieStorage = jar
            }
            let key = "revalidation-cookie-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=no-cache&etag=v1&set-cookie=session%3Dfresh")
            _ = try await Self.fetch(session, url)
            jar.removeAll()
            let revalidated = try await Self.fetch(session, url)
            #expect(revalidated.source == .revalidatedCache)
            #expect(server.attempts(forKey: key) == 2)
            #expect(jar.allCookies.map(\.value) == ["fresh"], "the 304's cookie was dropped")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func finishedRequestsThroughTheCacheAreReleased(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = Self.session(transport)
            let stored = server.url("/cached/release-\(transport.rawValue)?cache-control=max-age%3D60")
            // From the network (stored on the way), from the store, and revalidated (/cache).
            var fromNetwork: DataRequest? = session.request(stored)
            _ = try await fromNetwork?.serializingData().value
            var fromStore: DataRequest? = session.request(stored)
            _ = try await fromStore?.serializingData().value
            _ = try await session.request(server.url("/cache")).serializingData().value
            var revalidated: DataRequest? = session.request(server.url("/cache"))
            _ = try await revalidated?.serializingData().value
            #expect(fromStore?.metrics?.responseSource == .cache)
            #expect(revalidated?.metrics?.responseSource == .revalidatedCache)
            weak let first = fromNetwork
            weak let second = fromStore
            weak let third = revalidated
            fromNetwork = nil
            fromStore = nil
            revalidated = nil
            // Shutting the transport down waits until its threads have let go of the attempts.
            await session.invalidate()
            #expect(first == nil && second == nil && third == nil, "no cycle through the cache keeps a request")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCachedResponseHandlerDecidesWhatIsStored(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // The session's handler makes a response without freshness fresh for a minute.
            let longer = ResponseCacher.modify { _, response in
                guard let url = response.url else { return nil }
                var fields = response.headers.map { (name: $0.name, value: $0.value) }
                fields.removeAll { $0.name.lowercased() == "cache-control" }
                fields.append((name: "Cache-Control", value: "max-age=60"))
                return ResponseHead(
                    url: url,
                    statusCode: response.statusCode,
                    httpVersion: "HTTP/1.1",
                    headerFields: fields
                )
            }
            let session = Session(
                configuration: .init { $0.httpCache = .memory() },
                transport: transport.makeTransport(),
                cachedResponseHandler: longer
            )
            let key = "handler-\(transport.rawValue)"
            let url = server.url("/cached/\(key)?cache-control=no-cache")
            _ = try await Self.fetch(session, url)
            let second = try await Self.fetch(session, url)
            #expect(second.source == .cache && second.echo.hit == 1, "stored fresh by the handler")
            // A request's own handler wins: .doNotCache stores nothing.
            let other = server.url("/cached/\(key)-own?cache-control=max-age%3D60")
            _ = try await session.request(other).cacheResponse(using: .doNotCache).serializingData().value
            let again = try await Self.fetch(session, other)
            #expect(again.source == .network && again.echo.hit == 2)
            await session.invalidate()
        }
    }

    /// A `URLCache` on the URLSession transport's configuration gives way to Courier's cache,
    /// which then answers as the configuration's and each `URLRequest`'s cache policy ask.
    /// (FoundationNetworking's own would store nothing here, and would still go to the network
    /// for `returnCacheDataDontLoad`.)
    @Test func aURLCacheOnTheURLSessionTransportIsReplacedByCouriersCache() async throws {
        try await TestServer.withRunningServer { server in
            let configuration = URLSessionTransport.defaultConfiguration()
            configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
            configuration.requestCachePolicy = .returnCacheDataElseLoad
            let transport = URLSessionTransport(configuration: configuration)
            let cache = try #require(transport.httpCache, "the URLCache was not replaced")
            #expect(configuration.urlCache != nil, "the caller's configuration is left as it was")
            let session = Session(transport: transport)
            #expect(session.configuration.httpCache === cache)

            let key = "urlcache"
            // Stale at once, but the configuration's policy (returnCacheDataElseLoad) takes it.
            let url = server.url("/cached/\(key)?cache-control=max-age%3D0")
            let first = try await Self.fetch(session, url)
            #expect(first.source == .network && first.echo.hit == 1)
            let second = try await Self.fetch(session, url)
            #expect(second.source == .cache && second.echo.hit == 1)
            #expect(cache.currentBytes > 0)

            var offline = URLRequest(url: server.url("/cached/\(key)-absent"))
            offline.cachePolicy = .returnCacheDataDontLoad
            let missing = await session.request(offline).serializingData(emptyResponseCodes: [504]).response
            #expect(missing.head?.statusCode == 504)
            #expect(server.attempts(forKey: "\(key)-absent") == 0, "returnCacheDataDontLoad went to the network")
            #expect(server.attempts(forKey: key) == 1)
            await session.invalidate()
        }
    }

    /// A session's own cache wins over the transport's, and a transport configured without a
    /// `URLCache` brings none.
    @Test func aSessionsOwnCacheWinsOverTheTransports() async throws {
        let configuration = URLSessionTransport.defaultConfiguration()
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let own = HTTPCache.memory()
        let session = Session(
            configuration: Session.Configuration { $0.httpCache = own },
            transport: URLSessionTransport(configuration: configuration)
        )
        #expect(session.configuration.httpCache === own)
        #expect(URLSessionTransport().httpCache == nil)
        // A URLCache of no capacity is a common way to turn caching off: it stays off.
        let off = URLSessionTransport.defaultConfiguration()
        off.urlCache = URLCache(memoryCapacity: 0, diskCapacity: 0, diskPath: nil)
        #expect(URLSessionTransport(configuration: off).httpCache == nil)
        await session.invalidate()
    }

    /// A configuration's `returnCacheDataDontLoad` keeps `GET`s off the network, but a `POST`,
    /// which no cache answers, still goes (it would otherwise always get a `504`).
    @Test func aConfigurationsOfflinePolicyLeavesUnsafeMethodsAlone() async throws {
        try await TestServer.withRunningServer { server in
            let configuration = URLSessionTransport.defaultConfiguration()
            configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
            configuration.requestCachePolicy = .returnCacheDataDontLoad
            let session = Session(transport: URLSessionTransport(configuration: configuration))
            let key = "offline-policy"
            let get = await session.request(server.url("/cached/\(key)")).serializingData(emptyResponseCodes: [504])
                .response
            #expect(get.head?.statusCode == 504)
            let post = await session.request(server.url("/cached/\(key)"), method: .post).serializingData().response
            #expect(post.head?.statusCode == 200)
            #expect(server.attempts(forKey: key) == 1)
            await session.invalidate()
        }
    }
}

/// A cookie jar that signals each `Set-Cookie` it stores.
private final class SignallingCookieStorage: CookieStorage {
    private let jar = CookieJar()
    private let state = TestLock((fields: [String](), waiters: [(String, CheckedContinuation<Bool, Never>)]()))

    func store(setCookieFields: [String], from url: URL) {
        jar.store(setCookieFields: setCookieFields, from: url)
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.fields += setCookieFields
            let fields = state.fields
            let ready = state.waiters.filter { fields.contains($0.0) }.map(\.1)
            state.waiters.removeAll { fields.contains($0.0) }
            return ready
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    func cookieHeader(for url: URL) -> String? { jar.cookieHeader(for: url) }

    /// Returns once a response has set `field`.
    func waitForField(_ field: String) async -> Bool {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.fields.contains(field) { return true }
                state.waiters.append((field, continuation))
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }
}
