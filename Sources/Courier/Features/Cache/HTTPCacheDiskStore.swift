import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An ``HTTPCacheStore`` in a directory, holding at most ``byteLimit`` bytes; past it, the
/// least recently used entries go first. Entries survive the process: opening the directory
/// again finds them.
///
/// Each entry is two files named from a 64-bit FNV-1a hash of its key: `<hash>.meta`, the
/// metadata (``HTTPCacheEntryCoding``, with the full key, so two keys with one hash are told
/// apart), and `<hash>.<unique>.body`, the body, which never changes once written. Both are
/// written under a temporary name in the directory and renamed into place, the metadata last:
/// that rename is the commit, so an entry is whole or absent, even if the process dies while
/// writing. A `304` rewrites only the metadata. An entry whose files are missing, truncated or
/// corrupted is a miss and is removed. The directory is made private to the user (`0700`),
/// its files `0600`. One process should use a directory at a time.
///
/// Which entries were used last is kept in memory and, across restarts, in the metadata
/// files' modification times.
final class HTTPCacheDiskStore: HTTPCacheStore {
    private struct Indexed: Sendable {
        /// The body file's name.
        var bodyFile: String
        /// The body's and the metadata's bytes.
        var cost: Int64
    }

    private struct State: Sendable {
        /// By file stem (the key's hash in hex).
        var entries: [String: Indexed] = [:]
        var order = HTTPCacheLRU()
        var totalBytes: Int64 = 0
        /// Bytes written by writers not yet committed or discarded, across them all: bounded by
        /// the byte limit, so that many bodies stored at once cannot fill the disk.
        var pendingBytes: Int64 = 0
    }

    /// The directory holding the entries.
    let directory: URL
    /// The most bytes the entries may take together.
    let byteLimit: Int64
    /// The index and the files' renames, behind one lock: a lookup reads one small metadata file
    /// under it, and body bytes are read and written outside it.
    private let state = Protected(State())

    /// Opens (creating it if needed) the store in `directory`: removes leftovers of interrupted
    /// writes and broken entries, then evicts down to `byteLimit`.
    ///
    /// - Throws: ``CourierError`` `invalidURL` when the directory cannot be created or listed.
    init(directory: URL, byteLimit: Int64) throws {
        self.directory = directory.standardizedFileURL
        self.byteLimit = max(0, byteLimit)
        let path = self.directory.path
        do {
            try FileManager.default.createDirectory(
                atPath: path,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CourierError.invalidURL(path, reason: "the HTTP cache directory cannot be created")
        }
        // An existing directory too: cached responses may hold private data.
        chmod(path, 0o700)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw CourierError.invalidURL(path, reason: "the HTTP cache directory cannot be read")
        }
        state.withLock { state in loadIndex(names: names, into: &state) }
    }

    var totalBytes: Int64 { state.withLock { $0.totalBytes } }

    /// Bytes written by unfinished writers.
    var pendingBytes: Int64 { state.withLock { $0.pendingBytes } }

    var performsIO: Bool { true }

    func entry(forKey key: String) -> (entry: HTTPCacheEntry, body: HTTPCacheBody)? {
        let stem = Self.stem(for: key)
        return state.withLock { state in
            guard state.entries[stem] != nil else { return nil }
            guard let metadata = readMetadata(stem: stem, touching: true),
                metadata.bodyFile == state.entries[stem]?.bodyFile
            else {
                removeFiles(stem: stem, from: &state)
                return nil
            }
            let entry = metadata.entry
            // Another key with the same hash: not this one's entry, and not broken either.
            guard entry.key == key else { return nil }
            let descriptor = open(url(metadata.bodyFile).path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else {
                removeFiles(stem: stem, from: &state)
                return nil
            }
            guard Self.size(of: descriptor) == entry.bodyLength else {
                close(descriptor)
                removeFiles(stem: stem, from: &state)
                return nil
            }
            state.order.touch(stem)
            return (entry, HTTPCacheBody(fileDescriptor: descriptor, count: entry.bodyLength))
        }
    }

    func makeWriter(for entry: HTTPCacheEntry) -> HTTPCacheEntryWriter? {
        let temporary = url("tmp-\(UUID().uuidString)")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        // The open file until commit or discard closes it; the writer serialises its calls.
        let file = Protected<Int32?>(descriptor)
        let limit = byteLimit
        let written = Protected<Int64>(0)
        let state = self.state
        // What this writer counts in the store's pending bytes, given back once.
        let reserved = Protected<Int64>(0)
        let release: @Sendable () -> Void = {
            let amount = reserved.withLock { amount in
                defer { amount = 0 }
                return amount
            }
            if amount > 0 { state.withLock { $0.pendingBytes -= amount } }
        }
        let closeFile: @Sendable () -> Void = {
            file.withLock { descriptor in
                if let open = descriptor { close(open) }
                descriptor = nil
            }
        }
        let operations = HTTPCacheEntryWriter.Operations(
            write: { chunk in
                let size = Int64(chunk.count)
                let fits = written.withLock { total in
                    total += size
                    return total <= limit
                }
                let admitted =
                    fits
                    && state.withLock { state in
                        guard state.pendingBytes + size <= limit else { return false }
                        state.pendingBytes += size
                        return true
                    }
                if admitted { reserved.withLock { $0 += size } }
                guard admitted, let descriptor = file.withLock({ $0 }), Self.writeAll(chunk, to: descriptor) else {
                    closeFile()
                    unlink(temporary.path)
                    release()
                    return false
                }
                return true
            },
            commit: { [weak self] given, length in
                closeFile()
                release()
                guard let self else {
                    unlink(temporary.path)
                    return false
                }
                var stored = given
                stored.bodyLength = length
                return commit(stored, bodyAt: temporary)
            },
            discard: {
                closeFile()
                unlink(temporary.path)
                release()
            }
        )
        return HTTPCacheEntryWriter(entry: entry, operations: operations)
    }

    @discardableResult
    func updateEntry(_ entry: HTTPCacheEntry, replacing previous: HTTPCacheEntry?) -> Bool {
        let stem = Self.stem(for: entry.key)
        return state.withLock { state in
            guard let indexed = state.entries[stem], let metadata = readMetadata(stem: stem, touching: false),
                metadata.entry.key == entry.key, metadata.bodyFile == indexed.bodyFile
            else { return false }
            // `previous` was read from this file (as every entry this store hands out), so its
            // times compare exactly.
            if let previous, !metadata.entry.isSameVersion(as: previous) { return false }
            let (stored, bodyFile) = metadata
            var updated = entry
            updated.bodyLength = stored.bodyLength
            let encoded = HTTPCacheEntryCoding.encode(updated, bodyFile: bodyFile)
            guard writeAtomically(encoded, to: "\(stem).meta") else { return false }
            let cost = stored.bodyLength + Int64(encoded.count)
            state.totalBytes += cost - indexed.cost
            state.entries[stem]?.cost = cost
            state.order.touch(stem)
            evict(&state)
            return state.entries[stem] != nil
        }
    }

    func removeEntry(forKey key: String, where condition: (@Sendable (HTTPCacheEntry) -> Bool)?) {
        let stem = Self.stem(for: key)
        state.withLock { state in
            guard state.entries[stem] != nil else { return }
            // An unreadable record is removed whatever the condition: it serves nothing. One of
            // another key (the same hash) is not this key's to remove.
            if let condition, let metadata = readMetadata(stem: stem, touching: false),
                metadata.entry.key != key || !condition(metadata.entry)
            {
                return
            }
            removeFiles(stem: stem, from: &state)
        }
    }

    func removeAll() {
        state.withLock { state in
            for stem in Array(state.entries.keys) { removeFiles(stem: stem, from: &state) }
            // Writers still open hand their reservations back later: their count stays.
            let pending = state.pendingBytes
            state = State()
            state.pendingBytes = pending
        }
    }

    // MARK: - Under the lock

    /// Makes the body at `temporary` the entry's, writing its metadata last.
    private func commit(_ entry: HTTPCacheEntry, bodyAt temporary: URL) -> Bool {
        let stem = Self.stem(for: entry.key)
        let bodyFile = "\(stem).\(UUID().uuidString).body"
        let metadata = HTTPCacheEntryCoding.encode(entry, bodyFile: bodyFile)
        let cost = entry.bodyLength + Int64(metadata.count)
        return state.withLock { state in
            guard cost <= byteLimit, rename(temporary.path, url(bodyFile).path) == 0 else {
                unlink(temporary.path)
                return false
            }
            let previous = state.entries[stem]
            guard writeAtomically(metadata, to: "\(stem).meta") else {
                unlink(url(bodyFile).path)
                return false
            }
            if let previous {
                unlink(url(previous.bodyFile).path)
                state.totalBytes -= previous.cost
            }
            state.entries[stem] = Indexed(bodyFile: bodyFile, cost: cost)
            state.totalBytes += cost
            state.order.touch(stem)
            evict(&state)
            return state.entries[stem] != nil
        }
    }

    /// Removes the least recently used entries until the rest fit in the limit.
    private func evict(_ state: inout State) {
        while state.totalBytes > byteLimit, let oldest = state.order.oldest {
            removeFiles(stem: oldest, from: &state)
        }
    }

    /// Removes an entry's files and forgets it.
    private func removeFiles(stem: String, from state: inout State) {
        // Metadata first: without it the body is an orphan, never a half entry.
        unlink(url("\(stem).meta").path)
        if let removed = state.entries.removeValue(forKey: stem) {
            unlink(url(removed.bodyFile).path)
            state.totalBytes -= removed.cost
        }
        state.order.remove(stem)
    }

    /// Reads the directory's entries into `state`, oldest use first, removing whatever is not
    /// part of a whole entry.
    private func loadIndex(names: [String], into state: inout State) {
        var found: [(stem: String, indexed: Indexed, used: TimeInterval)] = []
        var referenced: Set<String> = []
        for name in names where name.hasSuffix(".meta") {
            let stem = String(name.dropLast(".meta".count))
            guard let metadata = readMetadata(stem: stem, touching: false),
                Self.stem(for: metadata.entry.key) == stem,
                Self.size(atPath: url(metadata.bodyFile).path) == metadata.entry.bodyLength,
                let metadataSize = Self.size(atPath: url(name).path)
            else {
                unlink(url(name).path)
                continue
            }
            let used = (try? FileManager.default.attributesOfItem(atPath: url(name).path)[.modificationDate] as? Date)?
                .timeIntervalSince1970
            referenced.insert(metadata.bodyFile)
            let indexed = Indexed(bodyFile: metadata.bodyFile, cost: metadata.entry.bodyLength + metadataSize)
            found.append((stem, indexed, used ?? 0))
        }
        for name in names where !name.hasSuffix(".meta") && !referenced.contains(name) {
            // Interrupted writes (`tmp-…`) and bodies whose metadata is gone or was replaced.
            if name.hasPrefix("tmp-") || name.hasSuffix(".body") { unlink(url(name).path) }
        }
        for (stem, indexed, _) in found.sorted(by: { $0.used < $1.used }) {
            state.entries[stem] = indexed
            state.totalBytes += indexed.cost
            state.order.touch(stem)
        }
        evict(&state)
    }

    /// The entry and body file name recorded in `<stem>.meta`, or `nil` when it is missing,
    /// too large, not a whole record, or names a body file this store would not have made. The
    /// name is read from disk, so it is checked: `<stem>.<UUID>.body`, nothing else, so that a
    /// damaged or planted record cannot make the store read, serve or delete a file elsewhere.
    /// `touching` marks it used (its modification time).
    private func readMetadata(stem: String, touching: Bool) -> (entry: HTTPCacheEntry, bodyFile: String)? {
        // Not through a symbolic link, and without waiting on a FIFO planted in its place: the
        // size check below then refuses anything but a regular file.
        let descriptor = open(url("\(stem).meta").path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard let size = Self.size(of: descriptor), size <= HTTPCacheEntryCoding.maximumSize else { return nil }
        var data = Data(count: Int(size))
        var filled = 0
        while filled < Int(size) {
            let count = data.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress.map { $0 + filled }, Int(size) - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            filled += count
        }
        guard let record = HTTPCacheEntryCoding.decode(data), Self.isBodyFileName(record.bodyFile, of: stem) else {
            return nil
        }
        if touching { futimens(descriptor, nil) }
        return record
    }

    /// Whether `name` is a body file name ``commit`` makes for `stem`: `<stem>.<UUID>.body`.
    static func isBodyFileName(_ name: String, of stem: String) -> Bool {
        let prefix = stem + "."
        let suffix = ".body"
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.utf8.count > prefix.utf8.count + suffix.utf8.count
        else { return false }
        let middle = name.dropFirst(prefix.count).dropLast(suffix.count)
        return UUID(uuidString: String(middle)) != nil
    }

    /// Writes `data` to a temporary file (`0600`) and renames it to `name`: the file is whole or
    /// as it was.
    private func writeAtomically(_ data: Data, to name: String) -> Bool {
        let temporary = url("tmp-\(UUID().uuidString)").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let written = Self.writeAll(data, to: descriptor)
        close(descriptor)
        guard written, rename(temporary, url(name).path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    private func url(_ name: String) -> URL {
        directory.appendingPathComponent(name, isDirectory: false)
    }

    // MARK: - Files

    /// Writes all of `data`, retrying partial writes and interruptions; `false` on failure.
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }

    /// The size of the regular file open as `descriptor`; `nil` for anything else.
    private static func size(of descriptor: Int32) -> Int64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// The size of the regular file at `path` itself (a symbolic link is not one); `nil` otherwise.
    private static func size(atPath path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// The file stem for `key`: its 64-bit FNV-1a hash in hex (16 digits). Not cryptographic:
    /// a collision costs a miss, because the metadata holds and is checked against the full key.
    static func stem(for key: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
