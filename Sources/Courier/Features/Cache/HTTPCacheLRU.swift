/// The order in which a store's entries were last used, with constant-time touch, removal and
/// "least recently used": a doubly linked list threaded through a dictionary by key.
struct HTTPCacheLRU: Sendable {
    private struct Links: Sendable {
        var older: String?
        var newer: String?
    }

    private var links: [String: Links] = [:]
    /// The least recently used key.
    private(set) var oldest: String?
    /// The most recently used key.
    private(set) var newest: String?

    /// How many keys are held.
    var count: Int { links.count }

    /// Marks `key` as just used, adding it if new.
    mutating func touch(_ key: String) {
        if newest == key { return }
        remove(key)
        links[key] = Links(older: newest, newer: nil)
        if let newest { links[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    /// Forgets `key`, if held.
    mutating func remove(_ key: String) {
        guard let removed = links.removeValue(forKey: key) else { return }
        if let older = removed.older { links[older]?.newer = removed.newer } else { oldest = removed.newer }
        if let newer = removed.newer { links[newer]?.older = removed.older } else { newest = removed.older }
    }

    /// Forgets every key.
    mutating func removeAll() {
        links.removeAll()
        oldest = nil
        newest = nil
    }
}
