import Atomics
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a lock: every read and write goes through ``withLock(_:)``.
///
/// Sendable when its value is: a type that keeps its mutable state in a `Protected` of a
/// `Sendable` value, in `let`s, is then checked `Sendable` by the compiler.
///
/// Several `Protected` values may share one ``Lock`` (``init(_:sharingLockWith:)``): a request
/// and the state its awaiters keep then cost one lock, not two. Whoever shares a lock must never
/// take one of them while holding another (the lock is not recursive): a change to two of them at
/// once takes the lock once, with ``withLock(together:_:)``.
final class Protected<Value> {
    private let lock: Lock
    /// Touched only with `lock` held, which is not recursive: a body that reaches for this value
    /// (or one sharing the lock) again blocks in `lock()` on Linux, or traps on Darwin, before it
    /// gets here, and `withLock(together:)` refuses to be handed its own value. So Swift's
    /// run-time exclusivity check (about 80 instructions an access, a dozen accesses a request)
    /// can never fire here, and is left out.
    @exclusivity(unchecked) private var value: Value

    /// A value behind a lock of its own.
    init(_ value: Value) {
        self.lock = Lock.make()
        self.value = value
    }

    /// A value behind the lock that already guards `other`. Neither may be taken while the other
    /// is held.
    init<Other>(_ value: Value, sharingLockWith other: Protected<Other>) {
        self.lock = other.lock
        self.value = value
    }

    /// A value behind `lock`, which may guard other values too. Neither may be taken while
    /// another is held.
    init(_ value: Value, lock: Lock) {
        self.lock = lock
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Keep `body` short and never call out to
    /// user code from it: decide under the lock, act after.
    @discardableResult
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// Runs `body` with exclusive access to the value and to `other`'s, which shares this lock
    /// (it was made with ``init(_:sharingLockWith:)`` or ``init(_:lock:)``): for a change that
    /// must touch both at once.
    @discardableResult
    func withLock<Other, Result>(
        together other: Protected<Other>,
        _ body: (inout Value, inout Other) throws -> Result
    ) rethrows -> Result {
        // Two locks here could deadlock against a thread taking them the other way round, and a
        // second value behind another lock would be touched unguarded: a programming error.
        precondition(other.lock.isSame(as: lock), "withLock(together:) needs values that share one lock")
        // Two `inout` accesses to one value would overlap, unchecked (see `value`).
        precondition(ObjectIdentifier(other) != ObjectIdentifier(self), "withLock(together:) needs two values")
        lock.lock()
        defer { lock.unlock() }
        return try body(&value, &other.value)
    }

    /// Whether ``mark()`` was called on this value's lock: read without taking the lock (see
    /// ``Lock/isMarked``).
    var isMarked: Bool { lock.isMarked }

    /// Sets the lock's mark, for good (see ``Lock/isMarked``).
    func mark() { lock.mark() }
}

// @unchecked Sendable: the only stored mutable state, `value`, is touched only while `lock` is
// held, and it is itself Sendable, so handing it between threads through the lock is safe.
extension Protected: @unchecked Sendable where Value: Sendable {}

/// A mutual-exclusion lock made with one allocation: the platform's lock lives in the storage
/// object itself. Not recursive.
///
/// `NSLock` on Linux allocates three more blocks (its mutex, and a condition and a mutex for
/// timed waits Courier never makes) and initialises and destroys all three: about 2,000
/// instructions per lock, and a request made one per piece of state. `Synchronization.Mutex`
/// would need no allocation at all, but ThreadSanitizer on Linux cannot see through it, and it
/// needs macOS 15.
struct Lock: @unchecked Sendable {
    // @unchecked Sendable: the only state is the platform lock in `storage`, made to be used from
    // any thread; its address never changes, since it is part of the storage object.
    fileprivate let storage: LockStorage

    /// A new, unlocked lock.
    static func make() -> Lock {
        let buffer = LockStorage.create(minimumCapacity: 1) { buffer in
            buffer.withUnsafeMutablePointerToElements { primitive in
                #if canImport(Darwin)
                primitive.initialize(to: os_unfair_lock())
                #else
                primitive.initialize(to: pthread_mutex_t())
                // A normal (non-recursive, unchecked) mutex: the default attributes.
                _ = pthread_mutex_init(primitive, nil)
                #endif
            }
            // The header: the mark, cleared.
            return UnsafeAtomic<Bool>.Storage(false)
        }
        // `create` is declared to return the base class, but makes an instance of `LockStorage`.
        return Lock(storage: unsafeDowncast(buffer, to: LockStorage.self))
    }

    /// Whether ``mark()`` has been called: one atomic word in the lock's own storage, read
    /// without taking the lock. For a rarely used part of the guarded state, so that the usual
    /// path can tell it need not take the lock to look: set the part under the lock, then mark;
    /// a reader that sees the mark takes the lock to read the part. A reader that does not see
    /// it yet behaves as it did just before the change, as if it had looked a moment earlier.
    /// A lock shared by several values has one mark, which only the request's state uses.
    @inline(__always)
    var isMarked: Bool {
        storage.withUnsafeMutablePointerToHeader { header in
            UnsafeAtomic<Bool>(at: header).load(ordering: .relaxed)
        }
    }

    /// Sets the mark that ``isMarked`` reads; it is never cleared.
    func mark() {
        storage.withUnsafeMutablePointerToHeader { header in
            UnsafeAtomic<Bool>(at: header).store(true, ordering: .releasing)
        }
    }

    /// Whether `self` and `other` are the same lock.
    func isSame(as other: Lock) -> Bool { storage === other.storage }

    /// Waits for, then takes, the lock.
    @inline(__always)
    func lock() {
        storage.withUnsafeMutablePointerToElements { primitive in
            #if canImport(Darwin)
            os_unfair_lock_lock(primitive)
            #else
            _ = pthread_mutex_lock(primitive)
            #endif
        }
    }

    /// Releases the lock, which the calling thread holds.
    @inline(__always)
    func unlock() {
        storage.withUnsafeMutablePointerToElements { primitive in
            #if canImport(Darwin)
            os_unfair_lock_unlock(primitive)
            #else
            _ = pthread_mutex_unlock(primitive)
            #endif
        }
    }
}

/// The storage of a ``Lock``: the mark (``Lock/isMarked``) as the header and the platform's lock
/// in the tail of one object, whose address never changes, so atomics can work on the header.
final class LockStorage: ManagedBuffer<UnsafeAtomic<Bool>.Storage, LockStorage.Primitive> {
    #if canImport(Darwin)
    typealias Primitive = os_unfair_lock
    #else
    typealias Primitive = pthread_mutex_t
    #endif

    deinit {
        withUnsafeMutablePointerToElements { primitive in
            #if !canImport(Darwin)
            _ = pthread_mutex_destroy(primitive)
            #endif
            _ = primitive.deinitialize(count: 1)
        }
    }
}
