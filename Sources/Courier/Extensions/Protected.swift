import Foundation

/// A value behind one lock: every read and write goes through ``withLock(_:)``.
///
/// `@unchecked Sendable` is sound because the only stored mutable state, `value`, is touched
/// only while `lock` is held.
final class Protected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Keep `body` short and never call out to
    /// user code from it: decide under the lock, act after.
    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
