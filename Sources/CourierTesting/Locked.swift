import Foundation

/// A value behind one lock: every read and write goes through ``withLock(_:)``.
///
/// An `NSLock` rather than `Synchronization.Mutex`, which needs macOS 15 while the package
/// supports macOS 13.
final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Never call out to a handler or to test
    /// code from `body`: decide under the lock, act after.
    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// @unchecked Sendable: `value` is read and written only while `lock` is held, and it is itself
// Sendable, so handing it between threads through the lock is safe.
extension Locked: @unchecked Sendable where Value: Sendable {}
