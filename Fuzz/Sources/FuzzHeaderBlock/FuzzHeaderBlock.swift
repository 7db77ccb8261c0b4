import Foundation
import FuzzSupport

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A response header block as a server could send it (`name: value` lines), through everything
// Courier does with one: `ResponseHead(url:statusCode:httpVersion:headerFields:)` and its
// `value(forHTTPHeaderField:)`, `headers`, `mimeType`, `textEncodingName`,
// `expectedContentLength` and `httpURLResponse`; then the same fields as `HTTPHeaders`
// (`init(_: [HTTPHeader])`, `value(for:)`, `firstInvalidity`, `HTTPHeaders.firstInvalidity(in:)`,
// `sorted()`, `description`, hashing).
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
    let input = FuzzInput(start, count)
    var fields: [(name: String, value: String)] = []
    for line in input.rest.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
        let line = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let value = line[colon...].dropFirst().drop { $0 == UInt8(ascii: " ") }
        fields.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self)))
    }
    guard let url = URL(string: "http://example.com/file") else { return 0 }
    let head = ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)

    let headers = head.headers
    fuzzCheck(headers.count <= fields.count, "more headers than fields")
    for field in fields.prefix(8) {
        fuzzCheck(head.value(forHTTPHeaderField: field.name) != nil, "a received field cannot be looked up")
        fuzzCheck(headers[asciiUppercased(field.name)] != nil, "a received field is missing from headers")
    }
    if let mimeType = head.mimeType {
        fuzzCheck(!mimeType.isEmpty && !mimeType.utf8.contains(UInt8(ascii: ";")), "mimeType keeps a parameter")
        fuzzCheck(!mimeType.utf8.contains { (65...90).contains($0) }, "mimeType keeps an upper-case letter")
    }
    if let charset = head.textEncodingName {
        fuzzCheck(!charset.isEmpty && !charset.utf8.contains(UInt8(ascii: ";")), "textEncodingName keeps a separator")
    }
    fuzzCheck(head.expectedContentLength >= -1, "expectedContentLength is below -1")
    _ = head.httpURLResponse?.allHeaderFields.count

    let built = HTTPHeaders(fields.map { HTTPHeader(name: $0.name, value: $0.value) })
    fuzzCheck(built.count <= fields.count, "HTTPHeaders grew")
    if let last = fields.last {
        fuzzCheck(built.value(for: last.name) == last.value, "the last field does not win")
    }
    _ = built.firstInvalidity
    _ = HTTPHeaders.firstInvalidity(in: built.dictionary)
    fuzzCheck(built.sorted().count == built.count, "sorting changed the count")
    _ = built.description
    _ = built.hashValue
    return 0
}

/// Header names compare ASCII-case-insensitively (they are tokens), so only ASCII letters change.
private func asciiUppercased(_ text: String) -> String {
    String(decoding: text.utf8.map { (97...122).contains($0) ? $0 - 32 : $0 }, as: UTF8.self)
}
