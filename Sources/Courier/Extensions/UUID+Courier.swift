import Foundation

extension UUID {
    /// A random (version 4) UUID from the standard library's system generator: what every
    /// request's ``Request/id`` is.
    ///
    /// `UUID()` on Linux opens, reads and closes `/dev/urandom` for each UUID: three system
    /// calls and about 5 µs of CPU, mostly in the kernel, where callgrind's instruction counts do
    /// not see it. `SystemRandomNumberGenerator` asks the kernel's `getrandom` twice for the same
    /// 128 bits, about a fifth of that. On Apple platforms both are cheap.
    static func makeRandom() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next().bigEndian
        let low = generator.next().bigEndian
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
