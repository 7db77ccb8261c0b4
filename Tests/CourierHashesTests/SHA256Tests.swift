import CourierHashes
import Testing

/// FIPS 180-4's examples (NIST's "SHA256.pdf") and the long message of FIPS 180-2's appendix.
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func knownAnswers(message: String, digest: String) {
        #expect(SHA256.hexDigest(of: Array(message.utf8)) == digest)
        #expect(SHA256.digest(of: Array(message.utf8)).count == SHA256.digestByteCount)
    }

    @Test func millionAs() {
        #expect(
            SHA256.hexDigest(of: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    @Test func incrementalUpdatesMatchOneShot() {
        let message = (0..<3).flatMap { _ in (0...255).map { UInt8($0) } }
        for split in [0, 1, 55, 56, 63, 64, 65, 127, 500, message.count] {
            var hasher = SHA256()
            message[..<split].withUnsafeBytes { hasher.update(bufferPointer: $0) }
            hasher.update(message[split...])
            #expect(
                hasher.hexDigest() == "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363",
                "split at \(split)"
            )
        }
    }
}
