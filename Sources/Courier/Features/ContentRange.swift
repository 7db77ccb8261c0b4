import Foundation

/// A `Content-Range: bytes first-last/complete` header's numbers.
struct ContentRange: Equatable {
    let start: Int64
    let completeLength: Int64?

    init(start: Int64, completeLength: Int64?) {
        self.start = start
        self.completeLength = completeLength
    }

    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2, let dash = halves[0].firstIndex(of: "-"),
            let start = Int64(halves[0][..<dash])
        else { return nil }
        self.start = start
        self.completeLength = Int64(halves[1])
    }
}
