import Foundation

/// An ``HTTPCacheStore`` in memory, holding at most ``byteLimit`` bytes of bodies and headers;
/// past it, the least recently used entries go first. Gone when the process ends.
///
/// A body larger than the whole limit is never kept: its writer stops holding bytes as soon as
/// the body passes the limit, so a large download through a small memory cache costs no memory.
/// Bodies still being written count against the limit too, all together: many large downloads
/// at once hold at most the limit in unfinished bodies (a writer that would pass it gives up, and
/// its response is not stored), so the store never holds more than twice its limit.
final class HTTPCacheMemoryStore: HTTPCacheStore {
    private struct Stored: Sendable {
        var entry: HTTPCacheEntry
        var body: HTTPCacheBody
        var cost: Int64
    }

    private struct State: Sendable {
        var entries: [String: Stored] = [:]
        var order = HTTPCacheLRU()
        var totalBytes: Int64 = 0
        /// The bytes writers hold for bodies not yet committed.
        var pendingBytes: Int64 = 0
    }

    /// The most bytes the entries may take together.
    let byteLimit: Int64
    /// The entries and their order, behind one lock: every call takes it once, briefly.
    private let state = Protected(State())

    init(byteLimit: Int64) {
        self.byteLimit = max(0, byteLimit)
    }

    var totalBytes: Int64 { state.withLock { $0.totalBytes } }

    var performsIO: Bool { false }

    func entry(forKey key: String) -> (entry: HTTPCacheEntry, body: HTTPCacheBody)? {
        state.withLock { state in
            guard let stored = state.entries[key] else { return nil }
            state.order.touch(key)
            return (stored.entry, stored.body)
        }
    }

    func makeWriter(for entry: HTTPCacheEntry) -> HTTPCacheEntryWriter? {
        // The chunks so far; the writer serialises its calls, this lock only makes that visible.
        let buffer = Protected(Data())
        let limit = byteLimit - Self.metadataCost(of: entry)
        let state = self.state
        let totalLimit = byteLimit
        // Gives back what the writer counted in the store's pending bytes, and drops its chunks.
        let release: @Sendable () -> Data = {
            let data = buffer.withLock { data in
                defer { data = Data() }
                return data
            }
            state.withLock { $0.pendingBytes -= Int64(data.count) }
            return data
        }
        let operations = HTTPCacheEntryWriter.Operations(
            write: { chunk in
                let size = Int64(chunk.count)
                let fits = buffer.withLock { Int64($0.count) + size <= limit }
                let reserved =
                    fits
                    && state.withLock { state in
                        guard state.pendingBytes + size <= totalLimit else { return false }
                        state.pendingBytes += size
                        return true
                    }
                guard reserved else {
                    _ = release()
                    return false
                }
                buffer.withLock { $0.append(chunk) }
                return true
            },
            commit: { [weak self] given, length in
                let body = release()
                guard let self else { return false }
                var stored = given
                stored.bodyLength = length
                return insert(stored, body: HTTPCacheBody(data: body))
            },
            discard: { _ = release() }
        )
        return HTTPCacheEntryWriter(entry: entry, operations: operations)
    }

    @discardableResult
    func updateEntry(_ entry: HTTPCacheEntry, replacing previous: HTTPCacheEntry?) -> Bool {
        state.withLock { state in
            guard var stored = state.entries[entry.key] else { return false }
            if let previous, !stored.entry.isSameVersion(as: previous) { return false }
            var updated = entry
            updated.bodyLength = stored.entry.bodyLength
            let cost = stored.body.count + Self.metadataCost(of: updated)
            state.totalBytes += cost - stored.cost
            stored.entry = updated
            stored.cost = cost
            state.entries[entry.key] = stored
            state.order.touch(entry.key)
            Self.evict(&state, limit: byteLimit)
            return state.entries[entry.key] != nil
        }
    }

    func removeEntry(forKey key: String, where condition: (@Sendable (HTTPCacheEntry) -> Bool)?) {
        state.withLock { state in
            if let condition, let stored = state.entries[key], !condition(stored.entry) { return }
            Self.remove(key, from: &state)
        }
    }

    func removeAll() {
        // Writers under way keep their count: they give it back when they end.
        state.withLock { state in
            state = State(pendingBytes: state.pendingBytes)
        }
    }

    /// The bytes writers hold for bodies still being written (for tests).
    var pendingBytes: Int64 { state.withLock { $0.pendingBytes } }

    /// Stores `entry` with `body`, replacing the key's previous entry, then evicts down to the
    /// limit; `false` when it alone is over the limit.
    private func insert(_ entry: HTTPCacheEntry, body: HTTPCacheBody) -> Bool {
        let cost = body.count + Self.metadataCost(of: entry)
        return state.withLock { state in
            Self.remove(entry.key, from: &state)
            guard cost <= byteLimit else { return false }
            state.entries[entry.key] = Stored(entry: entry, body: body, cost: cost)
            state.totalBytes += cost
            state.order.touch(entry.key)
            Self.evict(&state, limit: byteLimit)
            return true
        }
    }

    private static func remove(_ key: String, from state: inout State) {
        guard let removed = state.entries.removeValue(forKey: key) else { return }
        state.totalBytes -= removed.cost
        state.order.remove(key)
    }

    /// Removes the least recently used entries until the rest fit in `limit`.
    private static func evict(_ state: inout State, limit: Int64) {
        while state.totalBytes > limit, let oldest = state.order.oldest {
            remove(oldest, from: &state)
        }
    }

    /// About what an entry's metadata costs in memory: its key, URL and headers.
    static func metadataCost(of entry: HTTPCacheEntry) -> Int64 {
        var cost = 64 + entry.key.utf8.count + entry.url.absoluteString.utf8.count
        for header in entry.responseHeaders { cost += header.name.utf8.count + header.value.utf8.count + 4 }
        for (name, value) in entry.selectedRequestHeaders { cost += name.utf8.count + value.utf8.count + 4 }
        return Int64(cost)
    }
}
