import Foundation

/// A value behind one lock: every read and write goes through ``withLock(_:)``.
///
/// Sendable when its value is: a type that keeps its mutable state in a `Protected` of a
/// `Sendable` value, in `let`s, is then checked `Sendable` by the compiler.
final class Protected<Value> {
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

// @unchecked Sendable: the only stored mutable state, `value`, is touched only while `lock` is
// held, and it is itself Sendable, so handing it between threads through the lock is safe.
extension Protected: @unchecked Sendable where Value: Sendable {}
