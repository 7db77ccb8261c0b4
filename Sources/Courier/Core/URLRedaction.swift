import Foundation

/// Takes credentials out of URLs before they reach an error message, a description or a log.
enum URLRedaction {
    /// `url` without the user info of its authority (`user:password@`); any other text is kept
    /// as it is. Linear in the text; never fails.
    ///
    /// For text `URL` can parse, the authority ends at the first `/`, `?` or `#`, which cannot
    /// appear unencoded in user info. Text it cannot parse may hold a password with any of
    /// them: everything up to the last `@` after the scheme goes, even at the price of part of
    /// a path.
    static func removingUserInfo(from url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let authorityStart = schemeEnd.upperBound
        let rest = url[authorityStart...]
        let authorityEnd: String.Index
        if URL(string: url) != nil {
            authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        } else {
            authorityEnd = url.endIndex
        }
        // By scalars, not characters: an "@" followed by a combining mark is still an "@".
        let scalars = url.unicodeScalars
        guard let at = scalars[authorityStart..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<authorityStart]) + String(scalars[scalars.index(after: at)...])
    }
}
