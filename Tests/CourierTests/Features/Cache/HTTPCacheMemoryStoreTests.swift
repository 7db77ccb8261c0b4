import Foundation
import Testing

@testable import Courier

@Suite struct HTTPCacheMemoryStoreTests {
    static func entry(_ path: String) -> HTTPCacheEntry? {
        URL(string: "https://example.com/\(path)").flatMap {
            CacheFixture.entry(["Cache-Control": "max-age=60"], request: CacheFixture.request(url: $0))
        }
    }

    static func store(_ store: any HTTPCacheStore, _ entry: HTTPCacheEntry, body: Data) -> Bool {
        guard let writer = store.makeWriter(for: entry) else { return false }
        var offset = 0
        while offset < body.count {
            writer.write(body[offset..<min(body.count, offset + 7)])
            offset += 7
        }
        return writer.commit()
    }

    @Test func roundTripsAnEntryAndItsBody() throws {
        let store = HTTPCacheMemoryStore(byteLimit: 1 << 20)
        let entry = try #require(Self.entry("a"))
        let body = Data("hello, cached world".utf8)
        #expect(Self.store(store, entry, body: body))
        let found = try #require(store.entry(forKey: entry.key))
        #expect(found.entry.bodyLength == Int64(body.count))
        #expect(found.entry.responseHeaders == entry.responseHeaders)
        #expect(try found.body.data(limit: 100) == body)
        #expect(try found.body.read(from: 7, maximumLength: 6) == Data("cached".utf8))
        #expect(try found.body.data(limit: 3) == nil)
        #expect(store.entry(forKey: "GET https://example.com/other") == nil)
    }

    @Test func evictsTheLeastRecentlyUsedByBytes() throws {
        let a = try #require(Self.entry("a"))
        let b = try #require(Self.entry("b"))
        let c = try #require(Self.entry("c"))
        let cost = HTTPCacheMemoryStore.metadataCost(of: a) + 1000
        let store = HTTPCacheMemoryStore(byteLimit: cost * 2 + 10)
        let body = Data(repeating: 1, count: 1000)
        #expect(Self.store(store, a, body: body))
        #expect(Self.store(store, b, body: body))
        #expect(store.entry(forKey: a.key) != nil)  // a is now the most recently used
        #expect(Self.store(store, c, body: body))
        #expect(store.entry(forKey: b.key) == nil)
        #expect(store.entry(forKey: a.key) != nil)
        #expect(store.entry(forKey: c.key) != nil)
        #expect(store.totalBytes <= store.byteLimit)
    }

    @Test func unfinishedBodiesTogetherStayWithinTheLimit() throws {
        let a = try #require(Self.entry("a"))
        let b = try #require(Self.entry("b"))
        let store = HTTPCacheMemoryStore(byteLimit: 10_000)
        let first = try #require(store.makeWriter(for: a))
        let second = try #require(store.makeWriter(for: b))
        first.write(Data(count: 6_000))
        // Both would hold 12,000 unfinished bytes: the second gives up, and holds nothing.
        second.write(Data(count: 6_000))
        #expect(store.pendingBytes == 6_000)
        #expect(!second.commit())
        #expect(first.commit())
        #expect(store.pendingBytes == 0)
        #expect(store.entry(forKey: a.key) != nil)
        #expect(store.entry(forKey: b.key) == nil)
        // A writer dropped half-way gives its bytes back too.
        do {
            let dropped = try #require(store.makeWriter(for: b))
            dropped.write(Data(count: 1_000))
            withExtendedLifetime(dropped) { #expect(store.pendingBytes == 1_000) }
        }
        #expect(store.pendingBytes == 0)
    }

    @Test func aBodyLargerThanTheLimitIsNotKept() throws {
        let entry = try #require(Self.entry("big"))
        let store = HTTPCacheMemoryStore(byteLimit: 4096)
        let writer = try #require(store.makeWriter(for: entry))
        for _ in 0..<100 { writer.write(Data(repeating: 0, count: 1024)) }
        #expect(!writer.commit())
        #expect(store.entry(forKey: entry.key) == nil)
        #expect(store.totalBytes == 0)
    }

    @Test func nothingIsVisibleBeforeCommitAndDiscardLeavesNothing() throws {
        let entry = try #require(Self.entry("a"))
        let store = HTTPCacheMemoryStore(byteLimit: 1 << 20)
        let writer = try #require(store.makeWriter(for: entry))
        writer.write(Data("part".utf8))
        #expect(store.entry(forKey: entry.key) == nil)
        writer.discard()
        #expect(!writer.commit())
        #expect(store.entry(forKey: entry.key) == nil)
    }

    @Test func updateKeepsTheBody() throws {
        var entry = try #require(Self.entry("a"))
        let store = HTTPCacheMemoryStore(byteLimit: 1 << 20)
        #expect(Self.store(store, entry, body: Data("body".utf8)))
        entry.responseHeaders.update(name: "X-Merged", value: "1")
        #expect(store.updateEntry(entry, replacing: nil))
        let found = try #require(store.entry(forKey: entry.key))
        #expect(found.entry.responseHeaders["X-Merged"] == "1")
        #expect(try found.body.data(limit: 10) == Data("body".utf8))
        store.removeEntry(forKey: entry.key)
        #expect(!store.updateEntry(entry, replacing: nil))
        #expect(store.totalBytes == 0)
    }

    /// An update made from one stored version does not land on another stored since (a `304`
    /// merged into the old headers must not describe a new body).
    @Test func anUpdateOfAnOldVersionIsRefused() throws {
        let old = try #require(Self.entry("a"))
        let store = HTTPCacheMemoryStore(byteLimit: 1 << 20)
        #expect(Self.store(store, old, body: Data("old".utf8)))
        let stored = try #require(store.entry(forKey: old.key)).entry
        var newer = old
        newer.responseTime = old.responseTime.addingTimeInterval(5)
        #expect(Self.store(store, newer, body: Data("newer".utf8)))
        var merged = stored
        merged.responseHeaders.update(name: "X-Merged", value: "1")
        #expect(!store.updateEntry(merged, replacing: stored))
        #expect(store.entry(forKey: old.key)?.entry.responseHeaders["X-Merged"] == nil)
        let current = try #require(store.entry(forKey: old.key)).entry
        #expect(store.updateEntry(merged, replacing: current))
    }

    @Test func leastRecentlyUsedOrder() {
        var order = HTTPCacheLRU()
        for key in ["a", "b", "c"] { order.touch(key) }
        #expect(order.oldest == "a")
        order.touch("a")
        #expect(order.oldest == "b")
        #expect(order.newest == "a")
        order.remove("b")
        #expect(order.oldest == "c")
        order.remove("c")
        order.remove("a")
        #expect(order.oldest == nil && order.newest == nil && order.count == 0)
    }
}
