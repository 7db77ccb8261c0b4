import Foundation
import Testing

@testable import CourierTestServer

/// Vectors from CPython 3.11: `random.seed(s); bytes(random.randint(0, 255) for _ in range(n)).hex()`.
@Suite struct PythonRandomTests {
    @Test(arguments: [
        (42, "390c8c7d7247342cd8100f2f6f770d65"),
        (0, "c5d71484f8cf9bf4"),
        ((1 << 40) + 5, "890e175428447a46"),
        (-7, "a54dca182530bb1d"),
    ])
    func matchesCPython(seed: Int, expectedHex: String) {
        var generator = PythonRandom(seed: seed)
        let bytes = (0..<expectedHex.count / 2).map { _ in generator.nextByte() }
        #expect(bytes.map { String(format: "%02x", $0) }.joined() == expectedHex)
    }

    @Test func unseededGeneratorsDiffer() {
        var first = PythonRandom()
        var second = PythonRandom()
        let a = (0..<32).map { _ in first.nextByte() }
        let b = (0..<32).map { _ in second.nextByte() }
        #expect(a != b)
    }
}
