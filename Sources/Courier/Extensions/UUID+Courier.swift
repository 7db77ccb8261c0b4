import Atomics
import Foundation

extension UUID {
    /// A version-4 UUID for a request's ``Request/id``, made without a system call.
    ///
    /// `UUID()` on Linux opens, reads and closes `/dev/urandom` for each UUID (three system calls,
    /// about 5 µs of CPU), and `SystemRandomNumberGenerator` asks the kernel's `getrandom` twice
    /// per UUID: CPU spent in the kernel, where callgrind does not count it, on every request.
    /// Instead the 122 free bits are SipHash (the standard
    /// library's `Hasher`, seeded per process) of a counter and a key drawn from the system
    /// generator once per process: as unlikely to repeat as random bits, across processes too
    /// (except a child forked without `exec`, which shares both). An id is not a secret: it is
    /// not meant as a token or a nonce.
    static func makeRandom() -> UUID {
        let count = RequestIDSource.counter.loadThenWrappingIncrement(ordering: .relaxed)
        let high = RequestIDSource.bits(of: count, half: 0).bigEndian
        let low = RequestIDSource.bits(of: count, half: 1).bigEndian
        var value = UUID.null.uuid
        withUnsafeMutableBytes(of: &value) { bytes in
            bytes.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
        }
        // RFC 9562: the version (4, random) in the high nibble of byte 6, the variant (binary 10)
        // in the top bits of byte 8.
        value.6 = (value.6 & 0x0F) | 0x40
        value.8 = (value.8 & 0x3F) | 0x80
        return UUID(uuid: value)
    }

    /// The all-zero UUID, a starting value to fill in.
    private static let null = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

/// The counter and key behind ``Foundation/UUID/makeRandom()``.
private enum RequestIDSource {
    /// Counts the ids made; a never-freed atomic, shared by every thread.
    static let counter = UnsafeAtomic<UInt64>.create(0)
    /// Drawn once per process, so that ids differ between processes even where `Hasher` is made
    /// deterministic (`SWIFT_DETERMINISTIC_HASHING`).
    static let key: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    /// 64 bits of the id numbered `count`: `half` 0 or 1.
    static func bits(of count: UInt64, half: UInt8) -> UInt64 {
        #if _pointerBitWidth(_64)
        var hasher = Hasher()
        hasher.combine(key.0)
        hasher.combine(key.1)
        hasher.combine(half)
        hasher.combine(count)
        return UInt64(truncatingIfNeeded: hasher.finalize())
        #else
        // `Hasher` gives 32 bits here (watchOS's arm64_32): half the bits would be a sign.
        var generator = SystemRandomNumberGenerator()
        return generator.next()
        #endif
    }
}
