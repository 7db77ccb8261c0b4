import FuzzSupport

@testable import Courier

// A `Content-Range` value: `ContentRange.init?(_:)`. The numbers a resumed download trusts are
// never negative, and the range lies inside the complete length.
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
    guard let range = ContentRange(value) else { return 0 }
    fuzzCheck(range.start >= 0, "a negative start")
    if let complete = range.completeLength {
        fuzzCheck(complete > range.start, "a start at or past the complete length")
    }
    return 0
}
