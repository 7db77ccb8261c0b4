import Foundation
import FuzzSupport

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A `Content-Disposition` value to the file name a download is saved as:
// `ContentDisposition.fileName(in:)`, `DownloadRequest.sanitizedFileName(_:)` and
// `DownloadRequest.suggestedFileName(for:)`. Whatever the server sends, the name must be one
// plain, visible file name that fits a file system's 255-byte limit.
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
    let header = FuzzInput(start, count).restAsText
    let parsed = ContentDisposition.fileName(in: header)
    for candidate in [parsed, header].compactMap({ $0 }) {
        guard let name = DownloadRequest.sanitizedFileName(candidate) else { continue }
        checkPlainFileName(name)
    }
    guard let url = URL(string: "http://example.com/download"),
        let response = HTTPURLResponse(
            url: url,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: ["Content-Disposition": header]
        )
    else { return 0 }
    checkPlainFileName(DownloadRequest.suggestedFileName(for: response))
    return 0
}

private func checkPlainFileName(_ name: String) {
    fuzzCheck(!name.isEmpty, "an empty file name")
    // Bytes, not characters: a slash with a combining mark or joiner after it is another
    // Character, and still a slash to the file system.
    fuzzCheck(
        !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(UInt8(ascii: "\\")),
        "a file name with a path separator"
    )
    fuzzCheck(name.utf8.first != UInt8(ascii: "."), "a hidden file name, or . or ..")
    fuzzCheck(name.utf8.count <= 255, "a file name longer than 255 bytes")
    fuzzCheck(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "a control character")
}
