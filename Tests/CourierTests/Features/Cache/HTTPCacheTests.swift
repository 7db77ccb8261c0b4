import Foundation
import Testing

@testable import Courier

@Suite struct HTTPCacheTests {
    let start = CacheFixture.start

    /// Stores `headers` and `body` as the response to `request` received at `start`.
    private func store(
        _ cache: HTTPCache,
        _ headers: HTTPHeaders,
        body: String = "body",
        request: HTTPCacheRequest = CacheFixture.request()
    ) -> Bool {
        guard
            let writer = cache.writer(
                for: request,
                response: HTTPCacheResponseHead(statusCode: 200, headers: headers),
                requestTime: start,
                responseTime: start
            )
        else { return false }
        writer.write(Data(body.utf8))
        return writer.commit()
    }

    @Test func freshHitThenRevalidationThenMerge() throws {
        let cache = HTTPCache.memory()
        #expect(store(cache, ["Cache-Control": "max-age=10", "ETag": "\"1\""], body: "cached"))
        guard case .hit(let hit) = cache.lookup(CacheFixture.request(), now: start.addingTimeInterval(4)) else {
            Issue.record("expected a hit")
            return
        }
        #expect(hit.head.headers["Age"] == "4")
        #expect(try hit.body.data(limit: 100) == Data("cached".utf8))
        let later = start.addingTimeInterval(20)
        guard case .revalidate(let stored, let conditions) = cache.lookup(CacheFixture.request(), now: later) else {
            Issue.record("expected a revalidation")
            return
        }
        #expect(conditions == ["If-None-Match": "\"1\""])
        let merged = try #require(
            cache.mergeNotModified(
                HTTPCacheResponseHead(statusCode: 304, headers: ["Cache-Control": "max-age=100", "ETag": "\"1\""]),
                into: stored,
                for: CacheFixture.request(),
                requestTime: later,
                responseTime: later,
                now: later
            )
        )
        #expect(merged.head.statusCode == 200)
        #expect(try merged.body.data(limit: 100) == Data("cached".utf8))
        guard case .hit = cache.lookup(CacheFixture.request(), now: later.addingTimeInterval(50)) else {
            Issue.record("expected the merged entry to be fresh")
            return
        }
    }

    /// A 304 that says `no-store`, or answers a request that does, is served once and not kept.
    @Test(
        arguments: [(["Cache-Control": "no-store"], [:]), ([:], ["Cache-Control": "no-store"])]
            as [(HTTPHeaders, HTTPHeaders)]
    )
    func aNoStore304IsServedAndTheEntryRemoved(responseHeaders: HTTPHeaders, requestHeaders: HTTPHeaders) throws {
        let cache = HTTPCache.memory()
        #expect(store(cache, ["Cache-Control": "no-cache", "ETag": "\"1\""], body: "cached"))
        guard case .revalidate(let stored, _) = cache.lookup(CacheFixture.request(), now: start) else {
            Issue.record("expected a revalidation")
            return
        }
        var headers = responseHeaders
        headers.update(name: "ETag", value: "\"1\"")
        let merged = try #require(
            cache.mergeNotModified(
                HTTPCacheResponseHead(statusCode: 304, headers: headers),
                into: stored,
                for: CacheFixture.request(headers: requestHeaders),
                requestTime: start,
                responseTime: start,
                now: start
            )
        )
        #expect(try merged.body.data(limit: 100) == Data("cached".utf8))
        guard case .miss = cache.lookup(CacheFixture.request(), now: start) else {
            Issue.record("expected the entry to be gone")
            return
        }
    }

    @Test func aMismatched304RemovesTheEntry() throws {
        let cache = HTTPCache.memory()
        #expect(store(cache, ["Cache-Control": "no-cache", "ETag": "\"1\""]))
        guard case .revalidate(let stored, _) = cache.lookup(CacheFixture.request(), now: start) else {
            Issue.record("expected a revalidation")
            return
        }
        let merged = cache.mergeNotModified(
            HTTPCacheResponseHead(statusCode: 304, headers: ["ETag": "\"2\""]),
            into: stored,
            for: CacheFixture.request(),
            requestTime: start,
            responseTime: start,
            now: start
        )
        #expect(merged == nil)
        guard case .miss = cache.lookup(CacheFixture.request(), now: start) else {
            Issue.record("expected a miss")
            return
        }
    }

    /// A 304 that refutes the entry it revalidated, or says `no-store`, removes that entry only:
    /// a response stored for the URL while the revalidation was out stays.
    @Test(arguments: [false, true], [false, true])
    func a304RemovesOnlyTheVersionItRevalidated(onDisk: Bool, noStore: Bool) throws {
        try HTTPCacheDiskStoreTests.withDirectory { directory in
            let cache =
                onDisk
                ? HTTPCache(store: try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20))
                : HTTPCache.memory()
            #expect(store(cache, ["Cache-Control": "no-cache", "ETag": "\"1\""], body: "old"))
            guard case .revalidate(let stored, _) = cache.lookup(CacheFixture.request(), now: start) else {
                Issue.record("expected a revalidation")
                return
            }
            #expect(store(cache, ["Cache-Control": "max-age=100", "ETag": "\"2\""], body: "newer"))
            let notModified: HTTPHeaders = noStore ? ["ETag": "\"1\"", "Cache-Control": "no-store"] : ["ETag": "\"3\""]
            let merged = cache.mergeNotModified(
                HTTPCacheResponseHead(statusCode: 304, headers: notModified),
                into: stored,
                for: CacheFixture.request(),
                requestTime: start,
                responseTime: start,
                now: start
            )
            #expect((merged != nil) == noStore)
            guard case .hit(let hit) = cache.lookup(CacheFixture.request(), now: start) else {
                Issue.record("expected the newer entry to stay")
                return
            }
            #expect(try hit.body.data(limit: 100) == Data("newer".utf8))
        }
    }

    @Test func staleWhileRevalidateRefreshesOnceAtATime() throws {
        let cache = HTTPCache.memory()
        #expect(store(cache, ["Cache-Control": "max-age=1, stale-while-revalidate=100", "ETag": "\"s\""]))
        let now = start.addingTimeInterval(10)
        guard case .hitAndRefresh(let response, let conditions) = cache.lookup(CacheFixture.request(), now: now) else {
            Issue.record("expected a hit with a refresh")
            return
        }
        #expect(conditions == ["If-None-Match": "\"s\""])
        guard case .hit = cache.lookup(CacheFixture.request(), now: now) else {
            Issue.record("expected a plain hit while the refresh runs")
            return
        }
        cache.finishRefresh(forKey: response.entry.key)
        guard case .hitAndRefresh = cache.lookup(CacheFixture.request(), now: now) else {
            Issue.record("expected a new refresh once the first ended")
            return
        }
    }

    @Test func staleIfErrorAndOnlyIfCached() throws {
        let cache = HTTPCache.memory()
        #expect(store(cache, ["Cache-Control": "max-age=1, stale-if-error=60"]))
        #expect(cache.staleResponseOnError(for: CacheFixture.request(), now: start.addingTimeInterval(30)) != nil)
        #expect(cache.staleResponseOnError(for: CacheFixture.request(), now: start.addingTimeInterval(90)) == nil)
        let other = try #require(URL(string: "https://example.com/none"))
        guard case .gatewayTimeout = cache.lookup(CacheFixture.request(url: other, mode: .onlyIfCached), now: start)
        else {
            Issue.record("expected a 504")
            return
        }
        #expect(HTTPCache.gatewayTimeoutHead.statusCode == 504)
    }

    @Test func noStoreResponsesAreNotStoredAndRemoveTheOldEntry() throws {
        let cache = HTTPCache.memory()
        #expect(store(cache, ["Cache-Control": "max-age=100"]))
        #expect(!store(cache, ["Cache-Control": "no-store"]))
        guard case .miss = cache.lookup(CacheFixture.request(), now: start) else {
            Issue.record("expected a miss")
            return
        }
        #expect(!store(cache, ["Cache-Control": "max-age=100"], request: CacheFixture.request(mode: .noStore)))
        #expect(cache.currentBytes == 0)
    }

    /// A `no-store` response removes what was stored when its request went out, not a response
    /// stored since (it answered a later request), on either store.
    @Test(arguments: [false, true])
    func aNoStoreResponseLeavesAnEntryStoredAfterItsRequest(onDisk: Bool) throws {
        try HTTPCacheDiskStoreTests.withDirectory { directory in
            let cache =
                onDisk
                ? HTTPCache(store: try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20))
                : HTTPCache.memory()
            #expect(store(cache, ["Cache-Control": "max-age=100"]))
            func noStore(sentAt requestTime: Date) {
                let writer = cache.writer(
                    for: CacheFixture.request(),
                    response: HTTPCacheResponseHead(statusCode: 200, headers: ["Cache-Control": "no-store"]),
                    requestTime: requestTime,
                    responseTime: requestTime.addingTimeInterval(1)
                )
                #expect(writer == nil)
            }
            noStore(sentAt: start.addingTimeInterval(-5))
            guard case .hit = cache.lookup(CacheFixture.request(), now: start) else {
                Issue.record("stored after that request went out: kept")
                return
            }
            noStore(sentAt: start.addingTimeInterval(5))
            guard case .miss = cache.lookup(CacheFixture.request(), now: start.addingTimeInterval(6)) else {
                Issue.record("stored before that request went out: removed")
                return
            }
        }
    }

    @Test func unsafeMethodsInvalidate() throws {
        let cache = HTTPCache.memory()
        #expect(store(cache, ["Cache-Control": "max-age=100"]))
        cache.invalidate(
            after: CacheFixture.request("GET"),
            response: HTTPCacheResponseHead(statusCode: 200, headers: [:])
        )
        guard case .hit = cache.lookup(CacheFixture.request(), now: start) else {
            Issue.record("a GET must not invalidate")
            return
        }
        cache.invalidate(
            after: CacheFixture.request("POST"),
            response: HTTPCacheResponseHead(statusCode: 204, headers: [:])
        )
        guard case .miss = cache.lookup(CacheFixture.request(), now: start) else {
            Issue.record("a POST must invalidate")
            return
        }
    }

    @Test func diskCacheKeepsEntriesAcrossInstances() throws {
        try HTTPCacheDiskStoreTests.withDirectory { directory in
            let first = try HTTPCache.disk(directory: directory, byteLimit: 1 << 20)
            #expect(store(first, ["Cache-Control": "max-age=100"], body: "on disk"))
            let second = try HTTPCache(HTTPCache.Configuration(storage: .disk(directory: directory)))
            guard case .hit(let response) = second.lookup(CacheFixture.request(), now: start) else {
                Issue.record("expected a hit")
                return
            }
            #expect(try response.body.data(limit: 100) == Data("on disk".utf8))
            second.removeAll()
            #expect(second.currentBytes == 0)
        }
    }
}
