import NIOCore

/// A `Range` request against a resource of known length, resolved as httpbin's `/range` does,
/// plus `If-Range` (which httpbin ignores).
enum ByteRange: Equatable {
    /// Send the whole resource with `200`.
    case full
    /// Send bytes `first...last` with `206`.
    case partial(first: Int, last: Int)
    /// Answer `416` with `Content-Range: bytes */length`.
    case unsatisfiable

    /// Resolves the `Range` and `If-Range` headers of a request for a resource of `length` bytes
    /// whose validator is `entityTag`.
    ///
    /// A single `bytes=a-b`, `bytes=a-` or `bytes=-n` is honoured; anything else is ignored (the
    /// whole resource is sent, which RFC 9110 allows). An `If-Range` that does not match the entity
    /// tag also yields the whole resource.
    static func resolve(range: String?, ifRange: String?, length: Int, entityTag: String) -> ByteRange {
        guard let range = range?.trimmingSpaces(), range.hasPrefix("bytes") else { return .full }
        if let ifRange, normalizedTag(ifRange) != normalizedTag(entityTag) { return .full }
        let components = range.split(separator: "=", omittingEmptySubsequences: false)
        guard components.count == 2 else { return .full }
        let bounds = components[1].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .full }
        let start = Int(bounds[0].trimmingSpaces())
        let end = Int(bounds[1].trimmingSpaces())
        let first: Int
        let last: Int
        switch (start, end) {
        case (nil, nil):
            return .full
        case (nil, let suffix?):
            first = max(0, length - suffix)
            last = length - 1
        case (let start?, nil):
            first = start
            last = length - 1
        case (let start?, let end?):
            first = start
            last = end
        }
        guard first <= last, (0..<length).contains(first), (0..<length).contains(last) else { return .unsatisfiable }
        return first == 0 && last == length - 1 ? .full : .partial(first: first, last: last)
    }

    private static func normalizedTag(_ tag: String) -> String {
        var tag = tag.trimmingSpaces()
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = tag.dropFirst().dropLast() }
        return String(tag)
    }

    /// A stream of the `/range` pattern (`a` to `z`, repeating by absolute offset) over `offsets`.
    static func patternStream(_ offsets: ClosedRange<Int>, chunkSize: Int, interval: TimeAmount = .zero) -> BodyStream {
        var next = offsets.lowerBound
        let end = offsets.upperBound + 1
        return BodyStream(length: end - next, interval: interval) { allocator in
            guard next < end else { return nil }
            let count = min(chunkSize, end - next, Routes.largestChunk)
            var buffer = allocator.buffer(capacity: count)
            // A copy out of the pattern, not a byte-by-byte loop: the server must outrun the
            // clients a benchmark measures (this way it serves several GB/s).
            let phase = next % 26
            buffer.writeBytes(pattern[phase..<(phase + count)])
            next += count
            return buffer
        }
    }

    /// `a`–`z` repeated, long enough for any chunk (``Routes/largestChunk``) to start at any letter.
    private static let pattern: [UInt8] = (0..<(Routes.largestChunk + 26)).map { UInt8(97 + $0 % 26) }
}
