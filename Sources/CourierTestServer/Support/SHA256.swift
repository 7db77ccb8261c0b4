/// An incremental SHA-256 (FIPS 180-4), so the upload sink can hash a body of any size as it streams in.
///
/// Written here rather than taken from swift-crypto: the test server needs one digest, and
/// swift-crypto would add BoringSSL to every build of the package.
public struct SHA256: Sendable {
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    private var pending: [UInt8] = []
    private var messageLength: UInt64 = 0

    /// Creates a hasher with nothing hashed yet.
    public init() {
        pending.reserveCapacity(64)
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(bufferPointer: UnsafeRawBufferPointer(buffer))
        }
        if contiguous == nil {
            Array(bytes).withUnsafeBytes { update(bufferPointer: $0) }
        }
    }

    /// Adds the bytes in `buffer` to the message, compressing whole blocks straight from it.
    public mutating func update(bufferPointer buffer: UnsafeRawBufferPointer) {
        messageLength &+= UInt64(buffer.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: buffer[0..<take])
            offset = take
            if pending.count == 64 {
                let block = pending
                block.withUnsafeBytes { compress($0) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while buffer.count - offset >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 64]))
            offset += 64
        }
        if offset < buffer.count {
            pending.append(contentsOf: buffer[offset...])
        }
    }

    /// Finishes the message and returns its 32-byte digest.
    public func finalize() -> [UInt8] {
        var copy = self
        let bitLength = copy.messageLength &* 8
        var tail = copy.pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> shift)) }
        tail.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: 64) {
                copy.compress(UnsafeRawBufferPointer(rebasing: bytes[start..<start + 64]))
            }
        }
        let words = [
            copy.state.0, copy.state.1, copy.state.2, copy.state.3, copy.state.4, copy.state.5,
            copy.state.6, copy.state.7,
        ]
        return words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }

    /// The digest as 64 lowercase hexadecimal digits, as `sha256sum` prints it.
    public func hexDigest() -> String {
        finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The hex digest of `bytes` in one call.
    public static func hexDigest(of bytes: some Collection<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.hexDigest()
    }

    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            for index in 0..<16 {
                schedule[index] =
                    UInt32(block[index * 4]) << 24 | UInt32(block[index * 4 + 1]) << 16
                    | UInt32(block[index * 4 + 2]) << 8 | UInt32(block[index * 4 + 3])
            }
            for index in 16..<64 {
                let s0 =
                    rotateRight(schedule[index - 15], 7) ^ rotateRight(schedule[index - 15], 18)
                    ^ (schedule[index - 15] >> 3)
                let s1 =
                    rotateRight(schedule[index - 2], 17) ^ rotateRight(schedule[index - 2], 19)
                    ^ (schedule[index - 2] >> 10)
                schedule[index] = schedule[index - 16] &+ s0 &+ schedule[index - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            let roundConstants = Self.roundConstants
            for index in 0..<64 {
                let sum1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
                let choice = (e & f) ^ (~e & g)
                let temp1 = h &+ sum1 &+ choice &+ roundConstants[index] &+ schedule[index]
                let sum0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ sum0 &+ majority)
            }
            state = (
                state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g,
                state.7 &+ h
            )
        }
    }

    private func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }
}
