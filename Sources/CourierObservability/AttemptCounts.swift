import Foundation

/// What a monitor has heard of each request in flight: its attempts completed, and the
/// `error.type` of the last one.
///
/// A monitor hears of events on its queue after they happened, when the request may already be
/// in its next attempt, so reading `Request.retryCount` or `Request.error` then would describe
/// the wrong attempt. Events of one request arrive in order, so counting them is right. An entry
/// lives from a request's first attempt until ``finish(_:)``.
///
/// `@unchecked Sendable`: `entries` is read and written only under `lock` (a monitor shared by
/// several sessions may be called from several queues).
final class AttemptCounts: @unchecked Sendable {
    struct Entry {
        /// Attempts completed.
        var completed = 0
        /// The last completed attempt's `error.type`, if it failed.
        var lastErrorType: String?
    }

    private let lock = NSLock()
    private var entries: [UUID: Entry] = [:]

    /// Starts counting `id`; `true` when it was not counted yet.
    @discardableResult
    func start(_ id: UUID) -> Bool {
        lock.withLock {
            guard entries[id] == nil else { return false }
            entries[id] = Entry()
            return true
        }
    }

    /// Counts one more attempt of `id` as completed, with its `error.type`, and returns its
    /// number, from 1.
    func complete(_ id: UUID, errorType: String?) -> Int {
        lock.withLock {
            var entry = entries[id] ?? Entry()
            entry.completed += 1
            entry.lastErrorType = errorType
            entries[id] = entry
            return entry.completed
        }
    }

    /// What is known of `id` so far.
    func entry(_ id: UUID) -> Entry { lock.withLock { entries[id] ?? Entry() } }

    /// Stops counting `id`: what was known, or `nil` when it was never started.
    func finish(_ id: UUID) -> Entry? { lock.withLock { entries.removeValue(forKey: id) } }
}
