import Foundation

/// Who hears about one direction of a request's progress, and how often: a value the request
/// keeps under its lock, reading no clock itself (the request passes the time in).
///
/// Updates are throttled so a fast transfer does not call handlers once per 4 KB chunk: the first
/// update goes through, then one whenever at least 1 % more of a known length is done or
/// 50 ms have passed since the last, and always the final one.
///
/// | transfer | updates at most |
/// |---|---|
/// | 1 GiB at 1 GB/s | ~100 (by 1 %) + 20 a second |
/// | unknown length | 20 a second |
struct ProgressReporter {
    /// The closure added with `downloadProgress(queue:_:)` or `uploadProgress(queue:_:)`.
    var handler: (queue: DispatchQueue, handler: @Sendable (Progress) -> Void)?
    /// The async sequences listening.
    var streams: [AsyncStream<Progress>.Continuation] = []
    private var lastReport: (completed: Int64, nanoseconds: UInt64)?

    /// The shortest time between two updates, unless 1 % more is done.
    static let minimumInterval: UInt64 = 50_000_000

    /// Whether anyone listens.
    var hasListeners: Bool { handler != nil || !streams.isEmpty }

    /// Whether `completed` of `total` bytes (`total` < 0: unknown) at `nanoseconds` should be
    /// reported; records it if so.
    mutating func shouldReport(completed: Int64, total: Int64, nanoseconds: UInt64, isFinal: Bool) -> Bool {
        guard hasListeners else { return false }
        guard let last = lastReport else {
            lastReport = (completed, nanoseconds)
            return true
        }
        if isFinal || (total > 0 && (completed - last.completed) * 100 >= total)
            || nanoseconds &- last.nanoseconds >= Self.minimumInterval
        {
            lastReport = (completed, nanoseconds)
            return true
        }
        return false
    }

    /// A new attempt starts counting from zero: its first update goes through.
    mutating func reset() {
        lastReport = nil
    }
}
