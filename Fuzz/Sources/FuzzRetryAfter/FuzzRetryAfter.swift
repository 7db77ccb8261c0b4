import Foundation
import FuzzSupport

@testable import Courier

// A `Retry-After` value: `RetryAfter.delay(from:now:)` (which calls `RetryAfter.date(from:)`).
// A delay is never negative or NaN, whatever the server sends.
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
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    if let delay = RetryAfter.delay(from: value, now: now) {
        fuzzCheck(!delay.isNaN && delay >= 0, "a negative or NaN delay")
    }
    return 0
}
