/// A cryptographic hash that takes its message in pieces: ``MD5``, ``SHA256``, ``SHA512`` and
/// ``SHA512_256``.
///
/// Create one, ``update(bufferPointer:)`` (or ``update(_:)``) with each piece as it arrives, then
/// ``finalize()``; ``hexDigest(of:)`` does all three for a message held whole. Finalizing leaves
/// the hasher as it was, so it can take more pieces and give the digest of the longer message.
///
/// Written with the standard library alone, so that `Courier` stays Foundation-only (no
/// CryptoKit, which Linux lacks, and no swift-crypto, which would add BoringSSL to every build).
/// These hashes serve HTTP Digest authentication and body checksums; none is for keeping secrets.
public protocol HashFunction: Sendable {
    /// The length of a digest in bytes (16 for MD5, 32 for SHA-256).
    static var digestByteCount: Int { get }

    /// Creates a hasher with nothing hashed yet.
    init()

    /// Adds the bytes in `buffer` to the message.
    mutating func update(bufferPointer buffer: UnsafeRawBufferPointer)

    /// The digest of the message added so far, ``digestByteCount`` bytes.
    func finalize() -> [UInt8]
}

extension HashFunction {
    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(bufferPointer: UnsafeRawBufferPointer(buffer))
        }
        if contiguous == nil {
            Array(bytes).withUnsafeBytes { update(bufferPointer: $0) }
        }
    }

    /// The digest of the message added so far, as lowercase hexadecimal digits (as `sha256sum`
    /// prints it, and as HTTP Digest authentication sends it).
    public func hexDigest() -> String {
        Hexadecimal.lowercase(finalize())
    }

    /// The digest of `bytes` in one call.
    public static func digest(of bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = Self()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The lowercase hexadecimal digest of `bytes` in one call.
    public static func hexDigest(of bytes: some Sequence<UInt8>) -> String {
        var hasher = Self()
        hasher.update(bytes)
        return hasher.hexDigest()
    }
}

/// Lowercase hexadecimal text for bytes.
enum Hexadecimal {
    private static let digits = Array("0123456789abcdef".utf8)

    static func lowercase(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// What distinguishes one Merkle–Damgård hash from another: its block size, how it writes the
/// message length into the padding, and its compression function over a chaining state.
protocol BlockCompression: Sendable {
    /// Bytes per block: 64, or 128 for the SHA-512 family.
    static var blockByteCount: Int { get }
    /// Bytes the message's length in bits takes at the end of the padding: 8, or 16 for SHA-512.
    static var lengthByteCount: Int { get }
    /// Whether that length is big-endian (SHA-2) or little-endian (MD5).
    static var writesLengthBigEndian: Bool { get }

    /// Folds one block of exactly ``blockByteCount`` bytes into the state.
    mutating func compress(_ block: UnsafeRawBufferPointer)
}

/// The part every Merkle–Damgård hash shares: it keeps the bytes of an unfinished block,
/// compresses whole blocks straight from the caller's buffer, and pads the message at the end.
struct BlockHasher<Compression: BlockCompression>: Sendable {
    private var compression: Compression
    /// The bytes of the block not yet complete; always fewer than a block.
    private var pending: [UInt8] = []
    /// The message's length in bytes so far (wrapping past 2^64, as the standards' length does).
    private var messageLength: UInt64 = 0

    init(_ initial: Compression) {
        compression = initial
        pending.reserveCapacity(Compression.blockByteCount)
    }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        let blockByteCount = Compression.blockByteCount
        messageLength &+= UInt64(buffer.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(blockByteCount - pending.count, buffer.count)
            pending.append(contentsOf: buffer[0..<take])
            offset = take
            if pending.count == blockByteCount {
                // A copy to read from while `compression` changes (the two may not overlap as
                // accesses to `self`); it shares the array's storage, so nothing is copied.
                let block = pending
                block.withUnsafeBytes { compression.compress($0) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while buffer.count - offset >= blockByteCount {
            compression.compress(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + blockByteCount]))
            offset += blockByteCount
        }
        if offset < buffer.count {
            pending.append(contentsOf: buffer[offset...])
        }
    }

    /// The state after the padding and length are compressed in, leaving this hasher unchanged.
    func finalized() -> Compression {
        let blockByteCount = Compression.blockByteCount
        let lengthByteCount = Compression.lengthByteCount
        var state = compression
        var tail = pending
        tail.append(0x80)
        while tail.count % blockByteCount != blockByteCount - lengthByteCount { tail.append(0) }
        // The length in bits: 8 × the byte count, whose top 3 bits spill into the next word
        // (only SHA-512's 128-bit length has room for them).
        let lowBits = messageLength << 3
        let highBits = messageLength >> 61
        var length: [UInt8] = []
        for index in 0..<8 { length.append(UInt8(truncatingIfNeeded: lowBits >> (8 * index))) }
        for index in 0..<(lengthByteCount - 8) { length.append(UInt8(truncatingIfNeeded: highBits >> (8 * index))) }
        tail.append(contentsOf: Compression.writesLengthBigEndian ? length.reversed() : length)
        tail.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: blockByteCount) {
                state.compress(UnsafeRawBufferPointer(rebasing: bytes[start..<start + blockByteCount]))
            }
        }
        return state
    }
}

/// The bytes of `words`, each written big-endian (SHA-2) or little-endian (MD5).
func bytes<Word: FixedWidthInteger>(of words: [Word], bigEndian: Bool) -> [UInt8] {
    let byteCount = Word.bitWidth / 8
    var output: [UInt8] = []
    output.reserveCapacity(words.count * byteCount)
    for word in words {
        for index in 0..<byteCount {
            let shift = bigEndian ? 8 * (byteCount - 1 - index) : 8 * index
            output.append(UInt8(truncatingIfNeeded: word >> shift))
        }
    }
    return output
}
