import FuzzSupport

@testable import Courier

// A `WWW-Authenticate` value: `AuthenticationChallenge.parse(_:)`. Every challenge it returns
// has a scheme that is a token, parameter names lowercased, and no more challenges than bytes;
// `scripts/fuzz`'s time limit per input catches a read that is not linear.
@main
enum Main {
    static func main() {
        runFuzzer(testOneInput)
    }
}

/// One input; libFuzzer calls it over and over. Exported under libFuzzer's name as well, for the
/// case where the linker picks libFuzzer's own `main` over this program's.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let value = FuzzInput(start, count).restAsText
    let challenges = AuthenticationChallenge.parse(value)
    fuzzCheck(challenges.count <= value.utf8.count, "more challenges than bytes")
    for challenge in challenges {
        fuzzCheck(!challenge.scheme.isEmpty, "an empty scheme")
        fuzzCheck(
            !challenge.scheme.utf8.contains { $0 <= 0x20 || $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") },
            "a scheme that is not a token"
        )
        fuzzCheck(challenge.token68 == nil || challenge.parameters.isEmpty, "a token68 and parameters")
        for name in challenge.parameters.keys {
            fuzzCheck(!name.isEmpty, "an empty parameter name")
            fuzzCheck(
                !name.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) },
                "a name not lowercased"
            )
        }
    }
    return 0
}
