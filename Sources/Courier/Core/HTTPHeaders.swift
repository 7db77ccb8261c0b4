/// An ordered list of HTTP headers whose names compare case-insensitively.
///
/// Setting a header replaces one of the same name wherever it stands, so `Content-Type` and
/// `content-type` never both go out. Order is kept as added, because some servers care.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add(.authorization(bearerToken: token))
/// headers["accept"]   // "application/json"
/// ```
///
/// Lookups, additions and updates take constant time (amortised): past a few headers they are
/// indexed by their name with ASCII letters lowercased, the case-insensitivity HTTP defines for
/// names, so a response with ten thousand fields costs ten thousand steps, not a hundred million.
/// A few headers (a request's, most responses') are scanned instead, which costs less than
/// hashing their names. Removing one moves the headers after it.
public struct HTTPHeaders: Hashable, Sendable {
    private var headers: [HTTPHeader] = []
    /// The position in `headers` of each name, keyed by ``key(for:)``; `nil` up to
    /// ``scannedDirectly`` headers.
    private var positions: [String: Int]?

    /// Up to this many headers, a lookup scans them; beyond, they are indexed.
    static let scannedDirectly = 16

    /// No headers.
    public init() {}

    /// The given headers, in order; a later header replaces an earlier one of the same name.
    public init(_ headers: [HTTPHeader]) {
        reserveCapacity(headers.count)
        headers.forEach { update($0) }
    }

    /// The given name-value pairs; dictionaries have no order, so they are sorted by name.
    public init(_ dictionary: [String: String]) {
        reserveCapacity(dictionary.count)
        dictionary.sorted { $0.key < $1.key }.forEach { update(name: $0.key, value: $0.value) }
    }

    /// Sets header `name` to `value`, replacing one of the same name in place or appending.
    public mutating func add(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Sets `header`, replacing one of the same name in place or appending.
    public mutating func add(_ header: HTTPHeader) {
        update(header)
    }

    /// Sets header `name` to `value`, replacing one of the same name in place or appending.
    public mutating func update(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Sets `header`, replacing one of the same name in place or appending.
    public mutating func update(_ header: HTTPHeader) {
        if let index = position(of: header.name) {
            headers[index] = header
            return
        }
        headers.append(header)
        if positions != nil {
            positions?[Self.key(for: header.name)] = headers.count - 1
        } else if headers.count > Self.scannedDirectly {
            reindex()
        }
    }

    /// Removes the header named `name`, if any.
    public mutating func remove(name: String) {
        guard let index = position(of: name) else { return }
        headers.remove(at: index)
        guard positions != nil else { return }
        positions?.removeValue(forKey: Self.key(for: name))
        for later in headers[index...] {
            positions?[Self.key(for: later.name)]? -= 1
        }
    }

    /// Where the header named `name` stands, or `nil`.
    private func position(of name: String) -> Int? {
        if let positions { return positions[Self.key(for: name)] }
        return headers.firstIndex { Self.namesMatch($0.name, name) }
    }

    /// Sorts the headers by name, case-insensitively.
    public mutating func sort() {
        headers = headers.map { (key: Self.key(for: $0.name), header: $0) }.sorted { $0.key < $1.key }.map(\.header)
        reindex()
    }

    /// The headers sorted by name, case-insensitively.
    public func sorted() -> HTTPHeaders {
        var copy = self
        copy.sort()
        return copy
    }

    /// The value of header `name`, compared case-insensitively, or `nil`.
    public func value(for name: String) -> String? {
        position(of: name).map { headers[$0].value }
    }

    /// The value of header `name`; setting `nil` removes it.
    public subscript(_ name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue {
                update(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// The headers as a dictionary (names as added).
    public var dictionary: [String: String] {
        var dictionary: [String: String] = [:]
        dictionary.reserveCapacity(headers.count)
        for header in headers { dictionary[header.name] = header.value }
        return dictionary
    }

    /// The first header that cannot be sent and why, or `nil` if all are valid. The reason names
    /// the header but never holds its value, which may be a credential.
    public var firstInvalidity: (header: HTTPHeader, reason: String)? {
        for header in headers {
            if let reason = header.invalidityReason { return (header, reason) }
        }
        return nil
    }

    /// The invalid field of `fields` first by name and why, or `nil` if all are valid: the check
    /// of ``firstInvalidity`` without building (and sorting) an `HTTPHeaders` first.
    static func firstInvalidity(in fields: [String: String]) -> (header: HTTPHeader, reason: String)? {
        var first: (header: HTTPHeader, reason: String)?
        for (name, value) in fields {
            let header = HTTPHeader(name: name, value: value)
            guard let reason = header.invalidityReason else { continue }
            if first.map({ name < $0.header.name }) ?? true { first = (header, reason) }
        }
        return first
    }

    /// Equal when they hold the same headers in the same order, names compared case-insensitively.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.headers.count == rhs.headers.count
            && zip(lhs.headers, rhs.headers).allSatisfy {
                $0.value == $1.value && key(for: $0.name) == key(for: $1.name)
            }
    }

    /// Hashes names case-insensitively, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(headers.count)
        for header in headers {
            hasher.combine(Self.key(for: header.name))
            hasher.combine(header.value)
        }
    }

    /// Makes room for `count` headers in all, so that building a large set allocates once.
    mutating func reserveCapacity(_ count: Int) {
        headers.reserveCapacity(count)
        guard count > Self.scannedDirectly else { return }
        if positions == nil { reindex(creating: true) }
        positions?.reserveCapacity(count)
    }

    /// Rebuilds `positions` from `headers` when there is one (or `creating` one, or the headers
    /// have grown past ``scannedDirectly``).
    private mutating func reindex(creating: Bool = false) {
        guard creating || headers.count > Self.scannedDirectly || positions != nil else { return }
        var rebuilt = positions ?? [:]
        rebuilt.removeAll(keepingCapacity: true)
        for (index, header) in headers.enumerated() { rebuilt[Self.key(for: header.name)] = index }
        positions = rebuilt
    }

    /// ASCII case-insensitive equality, the rule for header names, without allocating.
    static func namesMatch(_ left: String, _ right: String) -> Bool {
        guard left.utf8.count == right.utf8.count else { return false }
        let compared = left.utf8.withContiguousStorageIfAvailable { leftBytes in
            right.utf8.withContiguousStorageIfAvailable { rightBytes in
                for index in leftBytes.indices where !byteNamesMatch(leftBytes[index], rightBytes[index]) {
                    return false
                }
                return true
            }
        }
        if let compared = compared ?? nil { return compared }
        var leftBytes = left.utf8.makeIterator()
        var rightBytes = right.utf8.makeIterator()
        while true {
            switch (leftBytes.next(), rightBytes.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                if !byteNamesMatch(a, b) { return false }
            default: return false
            }
        }
    }

    /// Whether two bytes of header names are equal, ASCII letters compared case-insensitively.
    @inline(__always)
    private static func byteNamesMatch(_ a: UInt8, _ b: UInt8) -> Bool {
        a == b || (a | 0x20 == b | 0x20 && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(a | 0x20))
    }

    /// The name with ASCII letters lowercased: how HTTP compares names (RFC 9110, section 5.1).
    /// Cheaper than `lowercased()`, which is Unicode-aware; a name without capitals is returned
    /// as it is, sharing its storage.
    static func key(for name: String) -> String {
        Substring(name).utf8.asciiLowercased
    }
}

extension HTTPHeaders {
    /// What a session sends unless told otherwise: ``HTTPHeader/defaultAcceptEncoding``,
    /// ``HTTPHeader/defaultAcceptLanguage`` and ``HTTPHeader/defaultUserAgent``.
    public static let `default`: HTTPHeaders = [
        .defaultAcceptEncoding, .defaultAcceptLanguage, .defaultUserAgent,
    ]
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Headers from a literal such as `["Accept": "application/json"]`, in written order.
    public init(dictionaryLiteral elements: (String, String)...) {
        elements.forEach { update(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: ExpressibleByArrayLiteral {
    /// Headers from a literal such as `[.accept("application/json")]`.
    public init(arrayLiteral elements: HTTPHeader...) {
        self.init(elements)
    }
}

extension HTTPHeaders: RandomAccessCollection {
    /// The position of the first header.
    public var startIndex: Int { headers.startIndex }
    /// The position after the last header.
    public var endIndex: Int { headers.endIndex }
    /// The header at `position`.
    public subscript(position: Int) -> HTTPHeader { headers[position] }
}

extension HTTPHeaders: CustomStringConvertible {
    /// One `name: value` line per header, credentials redacted.
    public var description: String {
        headers.map(\.description).joined(separator: "\n")
    }
}
