import Foundation

/// Takes credentials out of URLs before they reach an error message, a description or a log.
enum URLRedaction {
    /// `url` without the user info of its authority (`user:password@`); any other text is kept
    /// as it is. Linear in the text; never fails.
    static func removingUserInfo(from url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = url[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[authorityStart..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<authorityStart]) + String(url[url.index(after: at)...])
    }
}
