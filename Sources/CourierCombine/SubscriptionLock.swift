import Foundation

/// A lock around one value, for the subscriptions: Combine calls them from any thread.
final class SubscriptionLock<Value>: @unchecked Sendable {  // `value` is touched only under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
