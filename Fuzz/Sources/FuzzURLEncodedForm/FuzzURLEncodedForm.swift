import Foundation
import FuzzSupport

@testable import Courier
@testable import CourierTestServerParsers

// A form body or query string as the test server reads it: `FormDecoding.urlEncodedPairs(_:)`
// and `FormDecoding.decodeComponent(_:plusIsSpace:)`. What it decodes goes back through Courier's
// `URLEncodedFormEncoder.encode(_:)` (both space encodings) and must decode to the same pairs.
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
    var input = FuzzInput(start, count)
    let options = input.takeByte()
    let text = input.restAsText
    let pairs = FormDecoding.urlEncodedPairs(Substring(text))
    _ = FormDecoding.decodeComponent(Substring(text), plusIsSpace: false)

    // Later pairs win, as in the dictionary the encoder is given; it writes them sorted by key.
    let fields = Dictionary(pairs, uniquingKeysWith: { _, last in last })
    let encoder = URLEncodedFormEncoder(spaceEncoding: options & 1 == 0 ? .percentEscaped : .plusReplaced)
    guard let encoded = try? encoder.encode(fields) else {
        fuzzCheck(false, "a dictionary of strings does not encode")
        return 0
    }
    let roundTrip = FormDecoding.urlEncodedPairs(Substring(encoded))
    let expected = fields.sorted { $0.key < $1.key }
    fuzzCheck(
        roundTrip.count == expected.count
            && zip(roundTrip, expected).allSatisfy { pair, field in
                pair.0 == field.key && pair.1 == field.value
            },
        "a form does not survive encoding and decoding"
    )
    return 0
}
