import CourierHashes
import Testing

/// What every hash shares: pieces of any size give the digest of their concatenation, wherever
/// the block boundaries fall, and finalizing leaves the hasher usable.
@Suite struct HashFunctionTests {
    /// 300 bytes: more than two SHA-512 blocks and four MD5/SHA-256 blocks, so a split lands at
    /// every place relative to a block boundary and to the padding's length field.
    static let message = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

    static let hashes: [any HashFunction.Type] = [MD5.self, SHA256.self, SHA512.self, SHA512_256.self]

    @Test(arguments: hashes.indices)
    func twoPiecesSplitAtEveryOffsetMatchTheWholeMessage(index: Int) {
        splitAtEveryOffset(Self.hashes[index])
    }

    private func splitAtEveryOffset<Hash: HashFunction>(_: Hash.Type) {
        let whole = Hash.hexDigest(of: Self.message)
        for split in 0...Self.message.count {
            var hasher = Hash()
            Self.message[..<split].withUnsafeBytes { hasher.update(bufferPointer: $0) }
            hasher.update(Self.message[split...])
            #expect(hasher.hexDigest() == whole, "\(Hash.self) split at \(split)")
        }
    }

    @Test(arguments: hashes.indices)
    func oneByteAtATimeMatchesTheWholeMessage(index: Int) {
        oneByteAtATime(Self.hashes[index])
    }

    private func oneByteAtATime<Hash: HashFunction>(_: Hash.Type) {
        var hasher = Hash()
        var prefixDigests: [String] = []
        for byte in Self.message {
            hasher.update(CollectionOfOne(byte))
            prefixDigests.append(hasher.hexDigest())
        }
        // Each intermediate digest is that of the prefix so far: finalizing changed nothing.
        for (length, digest) in prefixDigests.enumerated() where length % 37 == 0 || length > 250 {
            #expect(digest == Hash.hexDigest(of: Self.message[...length]), "\(Hash.self) prefix \(length + 1)")
        }
    }

    @Test func aNonContiguousSequenceHashesLikeAnArray() {
        let lazyBytes = (0..<200).lazy.map { UInt8($0) }
        #expect(SHA256.hexDigest(of: lazyBytes) == SHA256.hexDigest(of: Array(lazyBytes)))
        #expect(MD5.hexDigest(of: lazyBytes) == MD5.hexDigest(of: Array(lazyBytes)))
    }

    @Test func digestsAreLowercaseHexadecimal() {
        for hash in Self.hashes {
            let text = hash.hexDigest(of: Self.message)
            #expect(text.count == 2 * hash.digestByteCount)
            #expect(text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
        }
    }
}
