import Foundation
import FuzzSupport

@testable import Courier

// Resume data read back from disk or another process: `DownloadResumeData.init(data:)`; and,
// for whatever decodes as JSON (skipping the check that the partial file exists), `encoded()`
// must read back as the same value and `urlRequest` must build.
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
    let data = Data(FuzzInput(start, count).rest)
    _ = try? DownloadResumeData(data: data)
    guard let decoded = try? JSONDecoder().decode(DownloadResumeData.self, from: data) else { return 0 }
    let again = try? JSONDecoder().decode(DownloadResumeData.self, from: decoded.encoded())
    fuzzCheck(again == decoded, "resume data does not survive encoding")
    _ = decoded.urlRequest
    return 0
}
