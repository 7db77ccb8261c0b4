import Foundation
import FuzzSupport

@testable import Courier

// A `Set-Cookie` value: `SetCookie.parse(_:)`, then the jar storing it for a URL the first byte
// chooses and sending it back. A parsed cookie has a non-empty name within the size limit, no
// control character, a non-empty lowercased Domain, a Path starting with `/`; the jar
// never holds a cookie for a domain the host does not match, and its header holds no CR or LF.
// `scripts/fuzz`'s time limit per input catches a read that is not linear.
@main
enum Main {
    static func main() {
        runFuzzer(testOneInput)
    }
}

private let urls = [
    "https://www.example.com/a/b", "http://example.com/", "http://127.0.0.1/x", "https://[::1]/", "http://localhost",
]
.compactMap(URL.init(string:))

/// One input; libFuzzer calls it over and over. Exported under libFuzzer's name as well, for the
/// case where the linker picks libFuzzer's own `main` over this program's.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let url = urls[Int(input.takeByte()) % urls.count]
    let value = input.restAsText
    if let cookie = SetCookie.parse(value) {
        fuzzCheck(!cookie.name.isEmpty, "an empty name")
        fuzzCheck(
            cookie.name.utf8.count + cookie.value.utf8.count <= SetCookie.maximumNameValueLength,
            "a name and value over the limit"
        )
        fuzzCheck(
            !(cookie.name + cookie.value).utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F },
            "a control character"
        )
        if let domain = cookie.domain {
            // One leading dot is dropped (`..a` keeps one, as RFC 6265 says); never an empty Domain.
            fuzzCheck(!domain.isEmpty, "an empty Domain")
            fuzzCheck(
                !domain.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) },
                "a Domain not lowercased"
            )
        }
        fuzzCheck(cookie.path.map { $0.utf8.first == UInt8(ascii: "/") } ?? true, "a Path not starting with /")
    }
    let jar = CookieJar(now: { Date(timeIntervalSince1970: 1_700_000_000) })
    jar.store(setCookieFields: [value], from: url)
    let host = CookieMatching.canonicalHost(of: url) ?? ""
    for cookie in jar.allCookies {
        fuzzCheck(CookieMatching.domainMatches(host: host, domain: cookie.domain), "a cookie for another domain")
    }
    let header = jar.cookieHeader(for: url) ?? ""
    fuzzCheck(!header.utf8.contains { $0 == 0x0D || $0 == 0x0A }, "CR or LF in the Cookie header")
    return 0
}
