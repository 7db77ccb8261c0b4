import Testing

@testable import courier

@Suite struct BodyDisplayTests {
    @Test func jsonByTypeOrShape() {
        #expect(
            BodyDisplay.classify(Array("[1]".utf8), contentType: "application/json", style: .plain)
                == .json("[\n  1\n]")
        )
        #expect(BodyDisplay.classify(Array(" {}".utf8), contentType: "text/plain", style: .plain) == .json("{}"))
        #expect(
            BodyDisplay.classify(Array("{oops".utf8), contentType: "application/json", style: .plain) == .text("{oops")
        )
    }

    @Test func binaryIsNotShown() {
        #expect(BodyDisplay.classify([0x41, 0, 0x42], contentType: nil, style: .plain) == .binary(byteCount: 3))
        #expect(BodyDisplay.classify([0xFF, 0xFE], contentType: "text/plain", style: .plain) == .binary(byteCount: 2))
        #expect(BodyDisplay.binary(byteCount: 3).rendered(style: .plain) == "binary data, 3 bytes, not shown\n")
    }
}
