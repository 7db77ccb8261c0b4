import CourierHashes

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a `multipart/form-data` body (RFC 7578, RFC 2046 section 5.1) as it streams in, in constant
/// memory: each part's content is counted and hashed as it passes, never kept.
///
/// Feed it the body in chunks of any size with ``consume(_:)``, which returns the parts that ended in
/// that chunk; then call ``finish()`` once the body has ended. A delimiter may be split across chunks
/// anywhere. It does no I/O and takes no lock, so tests feed it bytes directly.
///
/// What it holds between chunks is bounded: a delimiter's worth of bytes that might start one, or a
/// part's header block (at most ``maximumHeaderBytes``).
struct MultipartParser {
    /// What is known about a part once its content has ended.
    struct PartSummary: Equatable, Sendable {
        /// The `name` of its `Content-Disposition`.
        var name: String
        /// The `filename` of its `Content-Disposition`, if any.
        var filename: String?
        /// Its `Content-Type`, if any.
        var contentType: String?
        /// The length of its content.
        var bytes: Int
        /// The SHA-256 of its content, in lowercase hex.
        var sha256: String
    }

    /// Why a body is not a valid `multipart/form-data` body.
    struct Malformed: Error, Equatable, Sendable {
        /// What is wrong, in words.
        var reason: String
    }

    /// What ``consume(_:)`` found.
    enum ConsumeAction: Equatable {
        /// The body is fine so far; these parts (maybe none) ended in the chunk.
        case continueReading(endedParts: [PartSummary])
        /// The body is malformed; the rest of it is ignored.
        case fail(Malformed)
    }

    /// What ``finish()`` found.
    enum FinishAction: Equatable {
        /// The body ended properly, after its closing delimiter.
        case complete
        /// The body is malformed (or was reported so before).
        case fail(Malformed)
    }

    /// The largest header block a part may have.
    static let maximumHeaderBytes = 16 * 1024

    private enum State {
        /// Before the first delimiter, skipping the preamble. Next: `afterDelimiter`, `failed`.
        case preamble
        /// Just after a delimiter: `--` closes the body, CRLF starts a part's headers (spaces and tabs
        /// before either are transport padding). Next: `headers`, `epilogue`, `failed`.
        case afterDelimiter
        /// Reading a part's header block; `pending` holds it from the delimiter line's CRLF on.
        /// Next: `content`, `failed`.
        case headers
        /// Reading a part's content up to the next delimiter. Next: `afterDelimiter`.
        case content
        /// After the closing delimiter: the epilogue is ignored. Next: none.
        case epilogue
        /// Malformed; everything after is ignored. Next: none.
        case failed(Malformed)
    }

    private struct PartInProgress {
        var name: String
        var filename: String?
        var contentType: String?
        var bytes = 0
        var hasher = SHA256()
    }

    /// `\r\n--boundary`: what ends a part's content. The body is read as if it began with CRLF, so the
    /// first delimiter needs no special case.
    private let delimiter: [UInt8]
    private var state = State.preamble
    /// Bytes carried over to the next chunk: the start of a possible delimiter, or a header block.
    private var pending: [UInt8] = [13, 10]
    /// The part whose content is being read; kept out of `state` so the hasher is mutated in place.
    private var part: PartInProgress?

    /// A parser for parts separated by `boundary`, the `boundary` parameter of the body's `Content-Type`.
    init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// Reads the next chunk of the body.
    mutating func consume(_ chunk: UnsafeRawBufferPointer) -> ConsumeAction {
        if case .failed(let malformed) = state { return .fail(malformed) }
        if case .epilogue = state { return .continueReading(endedParts: []) }
        var buffer = pending
        buffer.append(contentsOf: chunk)
        pending = []
        var ended: [PartSummary] = []
        let outcome = buffer.withUnsafeBytes { bytes in process(bytes, ended: &ended) }
        switch outcome {
        case .success(let keptFrom):
            pending = Array(buffer[keptFrom...])
            return .continueReading(endedParts: ended)
        case .failure(let malformed):
            state = .failed(malformed)
            part = nil
            return .fail(malformed)
        }
    }

    /// Reads the next chunk of the body.
    mutating func consume(_ chunk: some Collection<UInt8>) -> ConsumeAction {
        Array(chunk).withUnsafeBytes { consume($0) }
    }

    /// Ends the body: it must have reached its closing delimiter.
    mutating func finish() -> FinishAction {
        switch state {
        case .epilogue:
            return .complete
        case .failed(let malformed):
            return .fail(malformed)
        case .preamble:
            return fail("the body holds no boundary delimiter")
        case .afterDelimiter, .headers, .content:
            return fail("the body ended before its closing boundary delimiter")
        }
    }

    private mutating func fail(_ reason: String) -> FinishAction {
        let malformed = Malformed(reason: reason)
        state = .failed(malformed)
        part = nil
        return .fail(malformed)
    }

    /// Runs the state machine over `bytes`, appending the parts that end to `ended`; returns where the
    /// bytes to keep for the next chunk start.
    private mutating func process(
        _ bytes: UnsafeRawBufferPointer,
        ended: inout [PartSummary]
    ) -> Result<Int, Malformed> {
        var position = 0
        while true {
            switch state {
            case .preamble:
                if let found = Self.firstIndex(of: delimiter, in: bytes, from: position) {
                    position = found + delimiter.count
                    state = .afterDelimiter
                } else {
                    return .success(Self.possibleStart(of: delimiter, in: bytes, from: position))
                }
            case .afterDelimiter:
                while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == 9 {
                    position += 1
                }
                guard bytes.count - position >= 2 else { return .success(position) }
                if bytes[position] == UInt8(ascii: "-"), bytes[position + 1] == UInt8(ascii: "-") {
                    state = .epilogue
                    return .success(bytes.count)
                }
                guard bytes[position] == 13, bytes[position + 1] == 10 else {
                    return .failure(Malformed(reason: "a boundary delimiter is followed by neither CRLF nor --"))
                }
                // The header block is read from this CRLF, so an empty block is simply CRLF CRLF.
                state = .headers
            case .headers:
                guard let end = Self.firstIndex(of: [13, 10, 13, 10], in: bytes, from: position) else {
                    guard bytes.count - position <= Self.maximumHeaderBytes else {
                        return .failure(
                            Malformed(reason: "a part's headers are longer than \(Self.maximumHeaderBytes) bytes")
                        )
                    }
                    return .success(position)
                }
                let block = UnsafeRawBufferPointer(rebasing: bytes[(position + 2)..<max(position + 2, end)])
                switch Self.partHeaders(block) {
                case .success(let newPart): part = newPart
                case .failure(let malformed): return .failure(malformed)
                }
                position = end + 4
                state = .content
            case .content:
                let found = Self.firstIndex(of: delimiter, in: bytes, from: position)
                let contentEnd = found ?? Self.possibleStart(of: delimiter, in: bytes, from: position)
                if contentEnd > position {
                    let content = UnsafeRawBufferPointer(rebasing: bytes[position..<contentEnd])
                    part?.bytes += content.count
                    part?.hasher.update(bufferPointer: content)
                }
                guard let found else { return .success(contentEnd) }
                if let part {
                    ended.append(
                        PartSummary(
                            name: part.name,
                            filename: part.filename,
                            contentType: part.contentType,
                            bytes: part.bytes,
                            sha256: part.hasher.hexDigest()
                        )
                    )
                }
                part = nil
                position = found + delimiter.count
                state = .afterDelimiter
            case .epilogue:
                return .success(bytes.count)
            case .failed(let malformed):
                return .failure(malformed)
            }
        }
    }

    /// The part a header block (its lines, without the empty line that ends it) describes.
    private static func partHeaders(_ block: UnsafeRawBufferPointer) -> Result<PartInProgress, Malformed> {
        let text = String(decoding: block, as: UTF8.self)
        var name: String?
        var filename: String?
        var contentType: String?
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else {
                return .failure(Malformed(reason: "a part header line has no colon"))
            }
            let field = line[..<colon].trimmingSpaces().lowercased()
            let value = String(line[line.index(after: colon)...].trimmingSpaces())
            if field == "content-disposition" {
                guard value.split(separator: ";").first?.trimmingSpaces().lowercased() == "form-data" else {
                    return .failure(Malformed(reason: "a part's Content-Disposition is not form-data"))
                }
                name = FormDecoding.headerParameter("name", in: value)
                filename = FormDecoding.headerParameter("filename", in: value)
            } else if field == "content-type" {
                contentType = value
            }
        }
        guard let name else {
            return .failure(Malformed(reason: "a part has no Content-Disposition with a name"))
        }
        return .success(PartInProgress(name: name, filename: filename, contentType: contentType))
    }

    /// The offset of the first `needle` in `haystack` at or after `start`.
    private static func firstIndex(of needle: [UInt8], in haystack: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = haystack.baseAddress, let first = needle.first else { return nil }
        var position = start
        while haystack.count - position >= needle.count {
            guard let found = memchr(base + position, Int32(first), haystack.count - position) else { return nil }
            let candidate = base.distance(to: UnsafeRawPointer(found))
            guard haystack.count - candidate >= needle.count else { return nil }
            let matches = needle.withUnsafeBytes { needle in
                needle.baseAddress.map { memcmp(base + candidate, $0, needle.count) == 0 } ?? false
            }
            if matches { return candidate }
            position = candidate + 1
        }
        return nil
    }

    /// Where the longest tail of `haystack` (from `start` on) that could begin `needle` starts:
    /// `haystack.count` when no tail could.
    private static func possibleStart(of needle: [UInt8], in haystack: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = haystack.baseAddress else { return haystack.count }
        var position = max(start, haystack.count - (needle.count - 1))
        while position < haystack.count {
            let length = haystack.count - position
            let matches = needle.withUnsafeBytes { needle in
                needle.baseAddress.map { memcmp(base + position, $0, length) == 0 } ?? false
            }
            if matches { return position }
            position += 1
        }
        return haystack.count
    }
}
