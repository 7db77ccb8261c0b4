import Foundation

// @unchecked Sendable: the counts sit in `counts`, behind one lock.
/// Bounds the retries a session sends relative to the requests it makes, so that when a server
/// fails, retries do not multiply the load on it.
///
/// Within any ``window`` a session may retry `minimumRetriesPerSecond × window` times plus
/// ``ratio`` of the requests it started in the window. A retry beyond that is not sent: the
/// request fails with the error of its last attempt, as if the retrier had said no. With the
/// defaults (20 %, at least 10 a second, over 10 s), a session making 1,000 requests in 10 s to a
/// server that fails them all sends at most 100 + 200 retries, not the 2,000 a retry limit of 2
/// alone would allow.
///
/// A session uses ``Session/Configuration/retryBudget``; sessions given the same budget share it.
///
/// Values out of range are clamped, never trusted: `ratio` to 0…1, `minimumRetriesPerSecond` to
/// 0…``maximumRetriesPerSecond`` (`.infinity` means "as many as that"), `window` to 1…3,600 s;
/// NaN counts as 0 (1 s for `window`).
public final class RetryBudget: @unchecked Sendable {
    /// The largest ``minimumRetriesPerSecond`` a budget takes: a million a second, in effect no bound.
    public static let maximumRetriesPerSecond: Double = 1_000_000

    /// The share of requests that may be retried, between 0 and 1.
    public let ratio: Double
    /// Retries allowed each second whatever the traffic, so a quiet session can still retry;
    /// between 0 and ``maximumRetriesPerSecond``.
    public let minimumRetriesPerSecond: Double
    /// The span, in seconds, over which requests and retries are counted: 1 to 3,600.
    public let window: TimeInterval

    /// Requests and retries counted in one second of the window.
    private struct Bucket {
        var second = Int64.min
        var requests = 0
        var retries = 0
    }

    private let counts: Protected<[Bucket]>
    private let now: @Sendable () -> TimeInterval

    /// A budget allowing `ratio` of the requests as retries, plus `minimumRetriesPerSecond`,
    /// over a sliding `window` of seconds.
    public convenience init(ratio: Double = 0.2, minimumRetriesPerSecond: Double = 10, window: TimeInterval = 10) {
        self.init(ratio: ratio, minimumRetriesPerSecond: minimumRetriesPerSecond, window: window) {
            ProcessInfo.processInfo.systemUptime
        }
    }

    /// A budget reading the time, in seconds, from `now`: tests pass a clock they control.
    init(
        ratio: Double,
        minimumRetriesPerSecond: Double,
        window: TimeInterval,
        now: @escaping @Sendable () -> TimeInterval
    ) {
        // `max(.nan, 0)` is NaN, and NaN would trap where the allowance becomes an `Int`.
        self.ratio = ratio.isNaN ? 0 : min(max(ratio, 0), 1)
        self.minimumRetriesPerSecond =
            minimumRetriesPerSecond.isNaN ? 0 : min(max(minimumRetriesPerSecond, 0), Self.maximumRetriesPerSecond)
        self.window = window.isNaN ? 1 : min(max(window, 1), 3600)
        self.now = now
        counts = Protected(Array(repeating: Bucket(), count: Int(self.window.rounded(.up))))
    }

    /// Counts a request's first attempt.
    func recordRequest() {
        let second = currentSecond()
        counts.withLock { buckets in
            let index = Self.bucketIndex(second, buckets.count)
            if buckets[index].second != second { buckets[index] = Bucket(second: second) }
            buckets[index].requests += 1
        }
    }

    /// Takes one retry from the budget and returns `true`, or returns `false` when it is spent.
    func spendRetry() -> Bool {
        let second = currentSecond()
        return counts.withLock { buckets in
            let (requests, retries) = Self.totals(buckets, at: second)
            guard retries < allowance(forRequests: requests) else { return false }
            let index = Self.bucketIndex(second, buckets.count)
            if buckets[index].second != second { buckets[index] = Bucket(second: second) }
            buckets[index].retries += 1
            return true
        }
    }

    /// How many more retries the budget allows now.
    public var availableRetries: Int {
        let second = currentSecond()
        return counts.withLock { buckets in
            let (requests, retries) = Self.totals(buckets, at: second)
            return max(0, allowance(forRequests: requests) - retries)
        }
    }

    private func allowance(forRequests requests: Int) -> Int {
        // At most 3.6e9 + `requests`, from the clamped members: far inside `Int`.
        let allowance = (minimumRetriesPerSecond * window + ratio * Double(requests)).rounded(.down)
        return allowance < Double(Int.max / 2) ? Int(allowance) : Int.max / 2
    }

    private func currentSecond() -> Int64 {
        let seconds = now()
        return seconds.isFinite ? Int64(seconds.rounded(.down)) : 0
    }

    private static func bucketIndex(_ second: Int64, _ count: Int) -> Int {
        Int(((second % Int64(count)) + Int64(count)) % Int64(count))
    }

    /// Requests and retries in the buckets still inside the window ending at `second`.
    private static func totals(_ buckets: [Bucket], at second: Int64) -> (requests: Int, retries: Int) {
        let oldest = second - Int64(buckets.count) + 1
        var requests = 0
        var retries = 0
        for bucket in buckets where bucket.second >= oldest && bucket.second <= second {
            requests += bucket.requests
            retries += bucket.retries
        }
        return (requests, retries)
    }
}
