import Foundation
import FuzzSupport

@testable import Courier

// A `Cache-Control` value: `CacheControl.init(_:)`, and the same text as an HTTP date
// (`HTTPDate.parse(_:)`, for `Expires`, `Date` and `Last-Modified`). Every number read is
// within delta-seconds' range, no more directives come out than bytes went in, and a date read is
// one a server could have meant; `scripts/fuzz`'s time limit per input catches a read that is
// not linear.
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
    let directives = CacheControl(value)
    let inRange = { (seconds: Int?) in seconds.map { (0...CacheControl.greatestDeltaSeconds).contains($0) } ?? true }
    fuzzCheck(inRange(directives.maxAge) && inRange(directives.sharedMaxAge), "a lifetime out of range")
    fuzzCheck(inRange(directives.minFresh), "a min-fresh out of range")
    fuzzCheck(inRange(directives.staleWhileRevalidate) && inRange(directives.staleIfError), "a window out of range")
    if case .seconds(let seconds) = directives.maxStale { fuzzCheck(inRange(seconds), "a max-stale out of range") }
    let all = CacheControl.directives(in: value)
    fuzzCheck(all.count <= value.utf8.count, "more directives than bytes")
    for (name, _) in all {
        fuzzCheck(!name.isEmpty, "an empty directive name")
        fuzzCheck(!name.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }, "a name not lowercased")
    }
    if let date = HTTPDate.parse(value) {
        fuzzCheck(value.utf8.count <= HTTPDate.longestDate, "a date read from overlong text")
        let seconds = date.timeIntervalSince1970
        // Year 1 to year 9999.
        fuzzCheck(seconds >= -62_135_596_800 && seconds <= 253_402_300_800, "a date out of range")
    }
    return 0
}
