import CourierHashes
import Testing

/// FIPS 180-4's examples for SHA-512 and SHA-512/256 (NIST's "SHA512.pdf", "SHA512_256.pdf").
@Suite struct SHA512Tests {
    static let shortMessage = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
    static let longMessage =
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"

    @Test(arguments: [
        (
            "",
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
                + "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        ),
        (
            "abc",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
        (
            shortMessage,
            "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
                + "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"
        ),
        (
            longMessage,
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
                + "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        ),
    ])
    func sha512KnownAnswers(message: String, digest: String) {
        #expect(SHA512.hexDigest(of: Array(message.utf8)) == digest)
        #expect(SHA512.digest(of: Array(message.utf8)).count == SHA512.digestByteCount)
    }

    @Test(arguments: [
        ("", "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a"),
        ("abc", "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"),
        (shortMessage, "bde8e1f9f19bb9fd3406c90ec6bc47bd36d8ada9f11880dbc8a22a7078b6a461"),
        (longMessage, "3928e184fb8690f840da3988121d31be65cb9d3ef83ee6146feac861e19b563a"),
    ])
    func sha512_256KnownAnswers(message: String, digest: String) {
        #expect(SHA512_256.hexDigest(of: Array(message.utf8)) == digest)
        #expect(SHA512_256.digest(of: Array(message.utf8)).count == SHA512_256.digestByteCount)
    }

    /// SHA-512/256 has its own initial state: its digest is not SHA-512's cut to 32 bytes.
    @Test func sha512_256IsNotTruncatedSHA512() {
        let message = Array("abc".utf8)
        #expect(SHA512_256.digest(of: message) != Array(SHA512.digest(of: message).prefix(32)))
    }

    @Test func millionAs() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(
            SHA512.hexDigest(of: message)
                == "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
                + "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"
        )
        #expect(
            SHA512_256.hexDigest(of: message) == "9a59a052930187a97038cae692f30708aa6491923ef5194394dc68d56c74fb21"
        )
    }
}
