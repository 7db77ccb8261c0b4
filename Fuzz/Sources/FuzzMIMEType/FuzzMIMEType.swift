import Foundation
import FuzzSupport

@testable import Courier

// A `Content-Type` value: `ResponseHead.mimeType` and `ResponseHead.textEncodingName` (each
// reading the field through `value(forHTTPHeaderField:)`), the charset through
// `String.Encoding(ianaCharsetName:)`; and the same text as a file name for
// `MultipartFormData.mimeType(forPathExtension:)`.
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
    guard let url = URL(string: "http://example.com/") else { return 0 }
    let head = ResponseHead(
        url: url,
        statusCode: 200,
        httpVersion: "HTTP/1.1",
        headerFields: [("Content-Type", value)]
    )
    if let mimeType = head.mimeType {
        // Bytes, not characters: U+037E (Greek question mark) equals ";" as a Character, but HTTP's
        // separators are ASCII bytes.
        fuzzCheck(!mimeType.isEmpty && !mimeType.utf8.contains(UInt8(ascii: ";")), "mimeType keeps a parameter")
        fuzzCheck(!mimeType.utf8.contains { (65...90).contains($0) }, "mimeType keeps an upper-case letter")
        // HTTP's whitespace, SP and HTAB; a transport never passes on CR or LF in a value.
        let httpWhitespace: Set<UInt8> = [0x20, 0x09]
        fuzzCheck(!httpWhitespace.contains(mimeType.utf8.first ?? 0), "mimeType starts with whitespace")
        fuzzCheck(!httpWhitespace.contains(mimeType.utf8.last ?? 0), "mimeType ends with whitespace")
    }
    if let charset = head.textEncodingName {
        fuzzCheck(!charset.isEmpty && !charset.utf8.contains(UInt8(ascii: ";")), "textEncodingName keeps a separator")
        fuzzCheck(!charset.utf8.contains { (65...90).contains($0) }, "textEncodingName keeps an upper-case letter")
        _ = String.Encoding(ianaCharsetName: charset)
    }
    let pathExtension = URL(fileURLWithPath: value).pathExtension
    fuzzCheck(MultipartFormData.mimeType(forPathExtension: pathExtension).contains("/"), "not a media type")
    return 0
}
