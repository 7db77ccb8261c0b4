import Foundation

/// The directives of a `Cache-Control` value (RFC 9111 §5.2), read from a request's or a
/// response's headers: what ``HTTPCachePolicy`` decides by.
///
/// The value comes from a server (or from code that built the request), so reading it never
/// fails: unknown directives are ignored, and a directive given twice or with a value that is not
/// a number is read the conservative way RFC 9111 §4.2.1 asks for (a repeated or unreadable
/// `max-age` makes the response stale rather than fresh for longer). One pass over the bytes,
/// however the value is made up.
struct CacheControl: Equatable, Sendable {
    /// How much staleness a request's `max-stale` accepts.
    enum MaxStale: Equatable, Sendable {
        /// `max-stale` without a value: any staleness.
        case unlimited
        /// `max-stale=N`: up to N seconds past the freshness lifetime.
        case seconds(Int)
    }

    /// `max-age`, in seconds (a response's freshness lifetime; a request's greatest acceptable age).
    var maxAge: Int?
    /// `s-maxage`, which a private cache does not obey but which lets it store a response to a
    /// request with `Authorization` (RFC 9111 §3.5).
    var sharedMaxAge: Int?
    /// `no-cache`, with or without field names: a field-name list is treated as the whole
    /// response needing validation, the conservative reading.
    var noCache = false
    /// `no-store`.
    var noStore = false
    /// `must-revalidate`.
    var mustRevalidate = false
    /// `public`.
    var isPublic = false
    /// `private` (allowed in a private cache; recorded for completeness).
    var isPrivate = false
    /// A request's `max-stale`.
    var maxStale: MaxStale?
    /// A request's `min-fresh`, in seconds.
    var minFresh: Int?
    /// A request's `only-if-cached`.
    var onlyIfCached = false
    /// `stale-while-revalidate` (RFC 5861), in seconds.
    var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861), in seconds.
    var staleIfError: Int?

    /// The largest delta-seconds value kept: RFC 9111 §1.2.2 has a greater one (or an overflow)
    /// read as 2^31; one less where `Int` has 32 bits (watchOS on arm64_32), where 2^31 is not an `Int`.
    static let greatestDeltaSeconds = Int(exactly: Int64(1) << 31) ?? Int.max

    /// No directives.
    init() {}

    /// The directives of one `Cache-Control` value (several fields already joined with `", "`).
    init(_ value: String) {
        var seen: Set<String> = []
        for (name, value) in Self.directives(in: value) {
            let repeated = !seen.insert(name).inserted
            apply(name: name, value: value, repeated: repeated)
        }
    }

    /// The directives of a response's headers.
    init(responseHeaders headers: HTTPHeaders) {
        self.init(headers.value(for: "Cache-Control") ?? "")
    }

    /// The directives of a request's headers: `Cache-Control`, or, when there is none,
    /// `Pragma: no-cache` read as `no-cache` (RFC 9111 §5.4).
    init(requestHeaders headers: HTTPHeaders) {
        if let value = headers.value(for: "Cache-Control") {
            self.init(value)
            return
        }
        self.init()
        if let pragma = headers.value(for: "Pragma") {
            noCache = Self.directives(in: pragma).contains { $0.name == "no-cache" }
        }
    }

    /// The name (lowercased) and value (unquoted) of every directive in `value`: for `Pragma`
    /// and tests.
    static func directives(in value: String) -> [(name: String, value: String?)] {
        var copy = value
        var found: [(name: String, value: String?)] = []
        copy.withUTF8 { bytes in forEachDirective(in: bytes) { found.append(($0, $1)) } }
        return found
    }

    /// Records one directive; `repeated` when the same name came earlier in the value.
    private mutating func apply(name: String, value: String?, repeated: Bool) {
        switch name {
        case "max-age":
            // A repeated or unreadable lifetime: "considered stale" (§4.2.1).
            maxAge = repeated ? 0 : Self.deltaSeconds(value) ?? 0
        case "s-maxage":
            sharedMaxAge = repeated ? 0 : Self.deltaSeconds(value) ?? 0
        case "no-cache": noCache = true
        case "no-store": noStore = true
        case "must-revalidate", "proxy-revalidate": mustRevalidate = true
        case "public": isPublic = true
        case "private": isPrivate = true
        case "only-if-cached": onlyIfCached = true
        case "max-stale":
            // The most restrictive wins: a bound beats none, a smaller bound a larger one; an
            // unreadable bound accepts no staleness.
            let bound = value == nil ? MaxStale.unlimited : .seconds(Self.deltaSeconds(value) ?? 0)
            switch (maxStale, bound) {
            case (nil, _), (.unlimited?, _): maxStale = bound
            case (.seconds(let old)?, .seconds(let new)): maxStale = .seconds(min(old, new))
            case (.seconds?, .unlimited): break
            }
        case "min-fresh":
            // The most restrictive is the largest; an unreadable one asks nothing.
            if let seconds = Self.deltaSeconds(value) { minFresh = max(minFresh ?? 0, seconds) }
        case "stale-while-revalidate":
            // Grants permission: the smallest wins, an unreadable one grants nothing.
            staleWhileRevalidate = min(staleWhileRevalidate ?? .max, Self.deltaSeconds(value) ?? 0)
        case "stale-if-error":
            staleIfError = min(staleIfError ?? .max, Self.deltaSeconds(value) ?? 0)
        default:
            break
        }
    }

    /// `value` as delta-seconds (digits only), a number too large for ``greatestDeltaSeconds``
    /// read as it; `nil` when absent or not digits.
    static func deltaSeconds(_ value: String?) -> Int? {
        guard let value, !value.isEmpty else { return nil }
        var result = 0
        for byte in value.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            if result < greatestDeltaSeconds {
                // Saturating: with a 32-bit Int, ten times a value under the bound can overflow.
                let (tens, overflowed) = result.multipliedReportingOverflow(by: 10)
                let (sum, overflowedAgain) = tens.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                result = overflowed || overflowedAgain ? greatestDeltaSeconds : min(greatestDeltaSeconds, sum)
            }
        }
        return result
    }

    /// Calls `body` with each directive's name (ASCII lowercased) and value (unquoted, `nil`
    /// without `=`), in order. Linear: every byte is looked at once. A directive whose name is
    /// empty is skipped; a comma inside a quoted string does not end its directive.
    private static func forEachDirective(
        in bytes: UnsafeBufferPointer<UInt8>,
        _ body: (String, String?) -> Void
    ) {
        let comma = UInt8(ascii: ",")
        let equals = UInt8(ascii: "=")
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var index = 0
        let end = bytes.count
        while index < end {
            while index < end, isSpace(bytes[index]) || bytes[index] == comma { index += 1 }
            let nameStart = index
            while index < end, bytes[index] != comma, bytes[index] != equals, !isSpace(bytes[index]) { index += 1 }
            let name = lowercased(bytes, nameStart, index)
            while index < end, isSpace(bytes[index]) { index += 1 }
            var value: String?
            if index < end, bytes[index] == equals {
                index += 1
                while index < end, isSpace(bytes[index]) { index += 1 }
                if index < end, bytes[index] == quote {
                    index += 1
                    var unquoted: [UInt8] = []
                    while index < end, bytes[index] != quote {
                        if bytes[index] == backslash, index + 1 < end { index += 1 }
                        unquoted.append(bytes[index])
                        index += 1
                    }
                    index += 1
                    value = String(decoding: unquoted, as: UTF8.self)
                } else {
                    let valueStart = index
                    while index < end, bytes[index] != comma, !isSpace(bytes[index]) { index += 1 }
                    value = String(decoding: UnsafeBufferPointer(rebasing: bytes[valueStart..<index]), as: UTF8.self)
                }
            }
            // Whatever follows up to the next comma is not part of any directive.
            var inQuotes = false
            while index < end, inQuotes || bytes[index] != comma {
                if bytes[index] == quote { inQuotes.toggle() }
                index += 1
            }
            if !name.isEmpty { body(name, value) }
        }
    }

    /// The bytes `start..<end` as text, ASCII letters lowercased.
    private static func lowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
        String(
            decoding: bytes[start..<end].lazy.map {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0
            },
            as: UTF8.self
        )
    }
}
