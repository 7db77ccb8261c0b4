import Foundation

/// Where `--download` saves when `--output` names no file: the URL's last path component, made
/// safe, and numbered (`name-1`, `name-2`…) rather than overwriting a file that exists.
enum DownloadTarget {
    /// The file name for `url`, where `exists` tells whether a name is taken.
    static func fileName(for url: URL, exists: (String) -> Bool) -> String {
        let last = url.lastPathComponent
        let cleaned = String(
            last.map { character -> Character in
                character.isLetter || character.isNumber || "._-".contains(character) ? character : "_"
            }
        ).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        let base = cleaned.isEmpty || last == "/" ? "index" : cleaned
        guard exists(base) else { return base }
        var number = 1
        while exists("\(base)-\(number)") { number += 1 }
        return "\(base)-\(number)"
    }
}
