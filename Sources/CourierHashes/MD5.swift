/// MD5 (RFC 1321), taking its message in pieces.
///
/// Broken for collision resistance, and here only because HTTP Digest authentication's default
/// algorithm is still MD5 (RFC 7616 keeps it for servers that offer nothing else).
public struct MD5: HashFunction {
    /// 16 bytes.
    public static let digestByteCount = 16

    private var hasher = BlockHasher(MD5Compression())

    /// Creates a hasher with nothing hashed yet.
    public init() {}

    /// Adds the bytes in `buffer` to the message, compressing whole blocks straight from it.
    public mutating func update(bufferPointer buffer: UnsafeRawBufferPointer) {
        hasher.update(buffer)
    }

    /// The 16-byte digest of the message added so far.
    public func finalize() -> [UInt8] {
        let state = hasher.finalized().state
        return bytes(of: [state.0, state.1, state.2, state.3], bigEndian: false)
    }
}

/// MD5's chaining state and compression function (RFC 1321 §3.4).
private struct MD5Compression: BlockCompression {
    static let blockByteCount = 64
    static let lengthByteCount = 8
    static let writesLengthBigEndian = false

    // The integer part of 2^32 × |sin(i + 1)|.
    private static let sines: [UInt32] = [
        0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
        0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
        0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
        0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
        0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
        0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
        0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
        0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
    ]

    // The left rotations of each round, four per round of sixteen steps.
    private static let rotations: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]

    var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)

    mutating func compress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { words in
            for index in 0..<16 {
                words[index] =
                    UInt32(block[index * 4]) | UInt32(block[index * 4 + 1]) << 8
                    | UInt32(block[index * 4 + 2]) << 16 | UInt32(block[index * 4 + 3]) << 24
            }
            var (a, b, c, d) = state
            let sines = Self.sines
            let rotations = Self.rotations
            for step in 0..<64 {
                let mixed: UInt32
                let wordIndex: Int
                switch step {
                case 0..<16:
                    mixed = (b & c) | (~b & d)
                    wordIndex = step
                case 16..<32:
                    mixed = (d & b) | (~d & c)
                    wordIndex = (5 * step + 1) % 16
                case 32..<48:
                    mixed = b ^ c ^ d
                    wordIndex = (3 * step + 5) % 16
                default:
                    mixed = c ^ (b | ~d)
                    wordIndex = (7 * step) % 16
                }
                let sum = a &+ mixed &+ sines[step] &+ words[wordIndex]
                let rotation = rotations[(step / 16) * 4 + step % 4]
                (a, b, c, d) = (d, b &+ ((sum << rotation) | (sum >> (32 - rotation))), b, c)
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
        }
    }
}
