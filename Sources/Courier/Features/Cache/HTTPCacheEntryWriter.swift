import Foundation

/// Writes one entry's body into a store, chunk by chunk, and makes it visible on ``commit(statusCode:responseHeaders:)``.
///
/// Until then nothing of it can be looked up; a writer dropped or ``discard()``ed leaves nothing
/// behind. A body that grows past what the store may hold, or that cannot be written, makes the
/// writer fail quietly: ``write(_:)`` ignores the rest and ``commit(statusCode:responseHeaders:)`` answers `false`. A cache
/// that cannot store a response must never fail the request that brought it.
///
/// Used by one request at a time; its calls are serialised by a lock, so it may move between
/// threads.
final class HTTPCacheEntryWriter: Sendable {
    /// The operations of the store behind this writer.
    struct Operations: Sendable {
        /// Takes a chunk; returns `false` when the body can no longer be stored.
        var write: @Sendable (Data) -> Bool
        /// Makes the entry visible with these metadata (the writer's entry, or the head a
        /// handler changed, for the same key) and its final length; returns whether it was stored.
        var commit: @Sendable (HTTPCacheEntry, Int64) -> Bool
        /// Throws away what was written.
        var discard: @Sendable () -> Void
    }

    private enum State: Sendable {
        case writing(length: Int64)
        case failed
        case finished
    }

    /// The entry being written (its primary key and metadata).
    let entry: HTTPCacheEntry
    private let operations: Operations
    private let state = Protected(State.writing(length: 0))

    init(entry: HTTPCacheEntry, operations: Operations) {
        self.entry = entry
        self.operations = operations
    }

    deinit {
        if case .writing = state.withLock({ $0 }) { operations.discard() }
    }

    /// Appends `chunk` to the body; ignored once the writer has failed or finished.
    func write(_ chunk: Data) {
        state.withLock { state in
            guard case .writing(let length) = state else { return }
            if operations.write(chunk) {
                state = .writing(length: length + Int64(chunk.count))
            } else {
                operations.discard()
                state = .failed
            }
        }
    }

    /// Makes the entry visible, replacing the one stored under its key; `false` when the body
    /// could not be stored (too large, a write failed, already finished). `statusCode` and
    /// `responseHeaders`, when given, replace the entry's in the same step (a
    /// ``CachedResponseHandler`` changed them): never a moment with the unchanged head stored,
    /// nor a change landing on another exchange's newer entry.
    @discardableResult
    func commit(statusCode: Int? = nil, responseHeaders: HTTPHeaders? = nil) -> Bool {
        var stored = entry
        if let statusCode { stored.statusCode = statusCode }
        if let responseHeaders { stored.responseHeaders = responseHeaders }
        return state.withLock { state in
            guard case .writing(let length) = state else { return false }
            state = .finished
            return operations.commit(stored, length)
        }
    }

    /// Throws away what was written: the body's response failed or was cancelled.
    func discard() {
        state.withLock { state in
            guard case .writing = state else { return }
            state = .finished
            operations.discard()
        }
    }
}
