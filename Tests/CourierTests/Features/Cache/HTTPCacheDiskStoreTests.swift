import Foundation
import Testing

@testable import Courier

@Suite struct HTTPCacheDiskStoreTests {
    /// A fresh directory under the temporary one, removed by the caller.
    static func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-cache-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent("http", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try body(directory)
    }

    static func files(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test func roundTripsAndSurvivesReopening() throws {
        try Self.withDirectory { directory in
            let entry = try #require(HTTPCacheMemoryStoreTests.entry("a"))
            let body = Data((0..<100_000).map { UInt8($0 % 251) })
            do {
                let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
                #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: body))
                let found = try #require(store.entry(forKey: entry.key))
                #expect(try found.body.data(limit: 1 << 20) == body)
            }
            let reopened = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            let found = try #require(reopened.entry(forKey: entry.key))
            #expect(
                found.entry
                    == {
                        var stored = entry
                        stored.bodyLength = Int64(body.count)
                        return stored
                    }()
            )
            #expect(try found.body.read(from: 99_990, maximumLength: 100) == body[99_990...])
            #expect(reopened.totalBytes > Int64(body.count))
            #expect(Self.files(in: directory).count == 2)
        }
    }

    @Test func replacingAnEntryRemovesTheOldBodyAndUpdateKeepsIt() throws {
        try Self.withDirectory { directory in
            var entry = try #require(HTTPCacheMemoryStoreTests.entry("a"))
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: Data("one".utf8)))
            let firstReader = try #require(store.entry(forKey: entry.key))
            #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: Data("second".utf8)))
            // A reader that opened the old body still reads it whole.
            #expect(try firstReader.body.data(limit: 10) == Data("one".utf8))
            #expect(Self.files(in: directory).count == 2)
            entry.responseHeaders.update(name: "X-Merged", value: "yes")
            // Made from the first version, the update does not land on the second body.
            #expect(!store.updateEntry(entry, replacing: firstReader.entry))
            let current = try #require(store.entry(forKey: entry.key)).entry
            #expect(store.updateEntry(entry, replacing: current))
            let found = try #require(
                try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20).entry(forKey: entry.key)
            )
            #expect(found.entry.responseHeaders["X-Merged"] == "yes")
            #expect(try found.body.data(limit: 10) == Data("second".utf8))
        }
    }

    @Test func evictsTheLeastRecentlyUsedAcrossReopening() throws {
        try Self.withDirectory { directory in
            let a = try #require(HTTPCacheMemoryStoreTests.entry("a"))
            let b = try #require(HTTPCacheMemoryStoreTests.entry("b"))
            let c = try #require(HTTPCacheMemoryStoreTests.entry("c"))
            let body = Data(repeating: 7, count: 10_000)
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 25_000)
            #expect(HTTPCacheMemoryStoreTests.store(store, a, body: body))
            #expect(HTTPCacheMemoryStoreTests.store(store, b, body: body))
            #expect(store.entry(forKey: a.key) != nil)
            #expect(HTTPCacheMemoryStoreTests.store(store, c, body: body))
            #expect(store.entry(forKey: b.key) == nil)
            #expect(store.entry(forKey: a.key) != nil && store.entry(forKey: c.key) != nil)
            #expect(Self.files(in: directory).count == 4)
            // A smaller limit on reopening evicts down to it.
            let smaller = try HTTPCacheDiskStore(directory: directory, byteLimit: 12_000)
            #expect(smaller.totalBytes <= 12_000)
            #expect(Self.files(in: directory).count == 2)
            let tooLarge = try #require(smaller.makeWriter(for: b))
            tooLarge.write(body)
            tooLarge.write(body)
            #expect(!tooLarge.commit())
            #expect(Self.files(in: directory).count == 2)
        }
    }

    @Test func corruptedOrTruncatedEntriesAreMissesAndRemoved() throws {
        try Self.withDirectory { directory in
            let entries = try ["meta", "body", "garbage", "empty"].map {
                try #require(HTTPCacheMemoryStoreTests.entry($0))
            }
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            for entry in entries {
                #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: Data(repeating: 3, count: 500)))
            }
            func path(_ entry: HTTPCacheEntry, _ suffix: String) throws -> String {
                let stem = HTTPCacheDiskStore.stem(for: entry.key)
                let name = try #require(Self.files(in: directory).first { $0.hasPrefix(stem) && $0.hasSuffix(suffix) })
                return directory.appendingPathComponent(name).path
            }
            let metaPath = try path(entries[0], ".meta")
            let metaLength = try #require(FileManager.default.attributesOfItem(atPath: metaPath)[.size] as? Int)
            #expect(truncate(metaPath, off_t(metaLength - 3)) == 0)
            #expect(truncate(try path(entries[1], ".body"), 100) == 0)
            try Data(repeating: 0xFF, count: 64).write(to: URL(fileURLWithPath: try path(entries[2], ".meta")))
            try Data().write(to: URL(fileURLWithPath: try path(entries[3], ".meta")))
            // Broken in a running store: misses, removed.
            for entry in entries[0...1] { #expect(store.entry(forKey: entry.key) == nil) }
            #expect(Self.files(in: directory).count == 4)
            // Broken at opening: removed, the rest kept.
            let reopened = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            for entry in entries { #expect(reopened.entry(forKey: entry.key) == nil) }
            #expect(Self.files(in: directory).isEmpty)
            #expect(reopened.totalBytes == 0)
        }
    }

    /// A record on disk that names a body file elsewhere (damaged, or planted by whoever can
    /// write the directory) is a miss and removed: the file it names is neither served nor deleted.
    @Test func aRecordNamingAFileElsewhereIsNeverFollowed() throws {
        try Self.withDirectory { directory in
            let entry = try #require(HTTPCacheMemoryStoreTests.entry("planted"))
            let body = Data(repeating: 9, count: 500)
            do {
                let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
                #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: body))
            }
            let outside = directory.deletingLastPathComponent().appendingPathComponent("outside.txt")
            try body.write(to: outside)
            let stem = HTTPCacheDiskStore.stem(for: entry.key)
            var stored = entry
            stored.bodyLength = Int64(body.count)
            let planted = HTTPCacheEntryCoding.encode(stored, bodyFile: "../outside.txt")
            try planted.write(to: directory.appendingPathComponent("\(stem).meta"))
            let reopened = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            #expect(reopened.entry(forKey: entry.key) == nil)
            #expect(FileManager.default.fileExists(atPath: outside.path), "the file it named is left alone")
            #expect(!Self.files(in: directory).contains { $0.hasSuffix(".meta") })
            #expect(HTTPCacheDiskStore.isBodyFileName("\(stem).\(UUID().uuidString).body", of: stem))
            for name in [
                "../x", "\(stem).body", "\(stem)./../x.body", "other.\(UUID().uuidString).body",
                "\(stem).\(UUID().uuidString).meta",
            ] {
                #expect(!HTTPCacheDiskStore.isBodyFileName(name, of: stem), "\(name)")
            }
        }
    }

    /// A record or body replaced by a symbolic link (to a valid record elsewhere) or by a FIFO is
    /// a miss and removed, found at opening or while running; a FIFO is never waited on.
    @Test(.timeLimit(.minutes(1))) func aLinkOrFIFOInPlaceOfAFileIsAMiss() throws {
        try Self.withDirectory { directory in
            let entries = try ["link", "fifo", "body-link"].map { try #require(HTTPCacheMemoryStoreTests.entry($0)) }
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            let outside = directory.deletingLastPathComponent()
            func replace(_ entry: HTTPCacheEntry, suffix: String, with make: (String, String) -> Int32) throws {
                let stem = HTTPCacheDiskStore.stem(for: entry.key)
                let name = try #require(Self.files(in: directory).first { $0.hasPrefix(stem) && $0.hasSuffix(suffix) })
                let path = directory.appendingPathComponent(name).path
                let copy = outside.appendingPathComponent(name).path
                #expect(rename(path, copy) == 0)
                #expect(make(copy, path) == 0)
            }
            func plant() throws {
                for entry in entries {
                    #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: Data(repeating: 4, count: 300)))
                }
                try replace(entries[0], suffix: ".meta") { target, path in symlink(target, path) }
                try replace(entries[1], suffix: ".meta") { _, path in mkfifo(path, 0o600) }
                try replace(entries[2], suffix: ".body") { target, path in symlink(target, path) }
            }
            try plant()
            for entry in entries { #expect(store.entry(forKey: entry.key) == nil, "\(entry.key)") }
            try plant()
            let reopened = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            for entry in entries { #expect(reopened.entry(forKey: entry.key) == nil) }
            #expect(reopened.totalBytes == 0)
            #expect(Self.files(in: directory).allSatisfy { !$0.hasSuffix(".meta") })
        }
    }

    /// Many bodies written at once stay within the byte limit together, as in the memory store:
    /// each writer's share counts until it commits, discards or is dropped.
    @Test func unfinishedBodiesTogetherStayWithinTheLimit() throws {
        try Self.withDirectory { directory in
            let a = try #require(HTTPCacheMemoryStoreTests.entry("a"))
            let b = try #require(HTTPCacheMemoryStoreTests.entry("b"))
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 10_000)
            let first = try #require(store.makeWriter(for: a))
            let second = try #require(store.makeWriter(for: b))
            first.write(Data(count: 6_000))
            second.write(Data(count: 6_000))
            #expect(store.pendingBytes == 6_000, "the second would pass the limit: it gives up")
            #expect(!second.commit())
            #expect(first.commit())
            #expect(store.pendingBytes == 0)
            #expect(store.entry(forKey: a.key) != nil)
            #expect(store.entry(forKey: b.key) == nil)
            do {
                let dropped = try #require(store.makeWriter(for: b))
                dropped.write(Data(count: 1_000))
                withExtendedLifetime(dropped) { #expect(store.pendingBytes == 1_000) }
            }
            #expect(store.pendingBytes == 0)
            #expect(!Self.files(in: directory).contains { $0.hasPrefix("tmp-") }, "no unfinished file left")
            // Emptied while a writer is open: its share still counts, and is given back once.
            let open = try #require(store.makeWriter(for: a))
            open.write(Data(count: 2_000))
            store.removeAll()
            #expect(store.pendingBytes == 2_000)
            open.discard()
            #expect(store.pendingBytes == 0)
        }
    }

    @Test func anEntryBeingWrittenIsNeverVisible() throws {
        try Self.withDirectory { directory in
            let entry = try #require(HTTPCacheMemoryStoreTests.entry("a"))
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: Data("old".utf8)))
            let writer = try #require(store.makeWriter(for: entry))
            writer.write(Data(repeating: 9, count: 50_000))
            // Meanwhile, the old entry is what a lookup (or another store opened now) finds.
            #expect(try store.entry(forKey: entry.key)?.body.data(limit: 10) == Data("old".utf8))
            #expect(Self.files(in: directory).contains { $0.hasPrefix("tmp-") })
            writer.write(Data(repeating: 9, count: 50_000))
            #expect(writer.commit())
            #expect(store.entry(forKey: entry.key)?.entry.bodyLength == 100_000)
            #expect(!Self.files(in: directory).contains { $0.hasPrefix("tmp-") })
            // A write the process never finished (a temporary file left behind) is cleared on opening.
            let abandoned = try #require(store.makeWriter(for: entry))
            abandoned.write(Data("half".utf8))
            let reopened = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            #expect(reopened.entry(forKey: entry.key)?.entry.bodyLength == 100_000)
            #expect(Self.files(in: directory).count == 2)
            abandoned.discard()
        }
    }

    @Test func filesArePrivateToTheUser() throws {
        try Self.withDirectory { directory in
            let entry = try #require(HTTPCacheMemoryStoreTests.entry("a"))
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: Data("secret".utf8)))
            func permissions(_ path: String) throws -> Int {
                try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            }
            #expect(try permissions(directory.path) == 0o700)
            for name in Self.files(in: directory) {
                #expect(try permissions(directory.appendingPathComponent(name).path) == 0o600)
            }
        }
    }

    @Test func aHashCollisionIsAMissNotAWrongAnswer() throws {
        try Self.withDirectory { directory in
            let entry = try #require(HTTPCacheMemoryStoreTests.entry("a"))
            let store = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            #expect(HTTPCacheMemoryStoreTests.store(store, entry, body: Data("a".utf8)))
            // Rename the entry's files to another key's stem: its metadata still names key "a".
            let otherKey = "GET https://example.com/b"
            let oldStem = HTTPCacheDiskStore.stem(for: entry.key)
            let newStem = HTTPCacheDiskStore.stem(for: otherKey)
            try FileManager.default.moveItem(
                at: directory.appendingPathComponent("\(oldStem).meta"),
                to: directory.appendingPathComponent("\(newStem).meta")
            )
            let reopened = try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20)
            #expect(reopened.entry(forKey: otherKey) == nil)
            #expect(HTTPCacheDiskStore.stem(for: "") == "cbf29ce484222325")
            #expect(HTTPCacheDiskStore.stem(for: "a") == "af63dc4c8601ec8c")
        }
    }
}
