import Foundation

/// Where an ``HTTPCache`` keeps entries: ``HTTPCacheMemoryStore`` or ``HTTPCacheDiskStore``.
///
/// Entries are found by primary key (``HTTPCacheKey/primary(method:url:)``). A body is written
/// through an ``HTTPCacheEntryWriter`` chunk by chunk and read back through an
/// ``HTTPCacheBody``, so neither way needs the whole body in memory; an entry becomes visible
/// only when its writer commits, never half written. Calls are synchronous: they take the store's
/// lock for bookkeeping only, and a disk store reads or writes a small metadata file; body bytes
/// move in the writer's and the body's own calls. A store whose calls touch files says so
/// (``performsIO``): its exchanges then call it from a queue of their own, never from a
/// transport's thread (an event loop, which must not wait for a disk).
protocol HTTPCacheStore: Sendable {
    /// Whether calls may wait for a disk: the store's callers then make them off the transport's thread.
    var performsIO: Bool { get }
    /// The entry stored under `key` and its body, or `nil`; marks it as used.
    func entry(forKey key: String) -> (entry: HTTPCacheEntry, body: HTTPCacheBody)?
    /// A writer for a new body of `entry` (its ``HTTPCacheEntry/bodyLength`` is set on commit);
    /// committing it replaces whatever `entry.key` held. `nil` when nothing can be stored now
    /// (a disk store whose directory is not writable).
    func makeWriter(for entry: HTTPCacheEntry) -> HTTPCacheEntryWriter?
    /// Replaces the metadata of the entry stored under `entry.key`, keeping its body (a `304`'s
    /// merge); `false` when there is no such entry any more, or, given `previous`, when the one
    /// stored is no longer that version (another response was stored meanwhile: the update,
    /// made from the old one, must not land on the new body).
    @discardableResult
    func updateEntry(_ entry: HTTPCacheEntry, replacing previous: HTTPCacheEntry?) -> Bool
    /// Removes the entry under `key`, if any; given `condition`, only when the one stored meets
    /// it (a response stored since the caller decided is not the one it decided on).
    func removeEntry(forKey key: String, where condition: (@Sendable (HTTPCacheEntry) -> Bool)?)
    /// Removes every entry.
    func removeAll()
    /// The bytes the entries take (bodies and metadata), at most the store's limit.
    var totalBytes: Int64 { get }
}

extension HTTPCacheStore {
    /// Removes the entry under `key`, whichever version it is.
    func removeEntry(forKey key: String) {
        removeEntry(forKey: key, where: nil)
    }

    /// Removes the entry under `key` while it is still `previous`, the version the caller read.
    func removeEntry(forKey key: String, ifSameVersionAs previous: HTTPCacheEntry) {
        removeEntry(forKey: key) { $0.isSameVersion(as: previous) }
    }
}
