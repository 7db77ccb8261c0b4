import Foundation

/// What a monitor has heard of each request in flight: its attempts completed, the `error.type`
/// of the last one, and the dimensions it was counted under when it became active.
///
/// A monitor hears of events on its queue after they happened, when the request may already be
/// in its next attempt, so reading `Request.retryCount` or `Request.error` then would describe
/// the wrong attempt: the events themselves are counted. An attempt's start is always told before
/// its request's finish, but its completion may come after a finish (a cancel racing it), so an
/// entry is made only by ``start(_:dimensions:)``, a completion never makes one, and
/// ``finish(_:)`` removes it: nothing stays behind once a request has finished.
///
/// `@unchecked Sendable`: `entries` is read and written only under `lock` (cheap: events of a
/// monitor arrive on its one queue, so the lock is never contended unless the monitor is called
/// from elsewhere).
final class AttemptCounts: @unchecked Sendable {
    struct Entry {
        /// Attempts completed.
        var completed = 0
        /// The `error.type` of the last completed attempt or failed validation.
        var lastErrorType: String?
        /// The dimensions the request was counted active under.
        var dimensions: [(String, String)] = []
    }

    private let lock = NSLock()
    private var entries: [UUID: Entry] = [:]

    /// Starts counting `request`, unless it is counted already; `true` when it was started now.
    /// (Courier tells of an attempt's start before the request's finish, always.)
    @discardableResult
    func start(_ id: UUID, dimensions: [(String, String)] = []) -> Bool {
        lock.withLock {
            guard entries[id] == nil else { return false }
            entries[id] = Entry(dimensions: dimensions)
            return true
        }
    }

    /// Counts one more attempt of `id` as completed, with its `error.type`, and returns its
    /// number, from 1; `nil` when `id` is not counted (finished already, or never started).
    func complete(_ id: UUID, errorType: String?) -> Int? {
        lock.withLock {
            guard var entry = entries[id] else { return nil }
            entry.completed += 1
            entry.lastErrorType = errorType
            entries[id] = entry
            return entry.completed
        }
    }

    /// Records a failed validation's kind as the reason a retry would be for, unless the
    /// attempt already has one (the status of a `4xx`/`5xx` answer says more).
    func failedValidation(_ id: UUID, errorType: String) {
        lock.withLock {
            guard entries[id] != nil, entries[id]?.lastErrorType == nil else { return }
            entries[id]?.lastErrorType = errorType
        }
    }

    /// What is known of `id` so far.
    func entry(_ id: UUID) -> Entry { lock.withLock { entries[id] ?? Entry() } }

    /// Stops counting `id`: what was known, or `nil` when it was never started.
    func finish(_ id: UUID) -> Entry? { lock.withLock { entries.removeValue(forKey: id) } }
}
