import Foundation

/// A value behind an `NSLock`, for tests that record from several threads. An `NSLock` rather
/// than `Synchronization.Mutex`, which ThreadSanitizer cannot see through on Linux (it reports the
/// accesses it guards as races).
public final class TestLock<Value> {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, alone.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// @unchecked Sendable: `value` is touched only while `lock` is held, and is itself Sendable.
extension TestLock: @unchecked Sendable where Value: Sendable {}
