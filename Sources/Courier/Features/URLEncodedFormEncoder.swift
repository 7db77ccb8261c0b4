import Foundation

/// Encodes an `Encodable` value as `application/x-www-form-urlencoded` text, e.g.
/// `name=Courier&tags[]=http&tags[]=swift&limits[rate]=2`.
///
/// Servers disagree on how nested values look in a form, so each choice is an option. The
/// defaults match what Rails, PHP and most web frameworks read: arrays as `key[]`, nested objects
/// as `key[sub]`, booleans as `1`/`0`, numbers without a needless `.0`, and pairs sorted by key so
/// the same value always encodes the same way.
public struct URLEncodedFormEncoder: Sendable {
    /// How array elements are named.
    public enum ArrayEncoding: Sendable {
        /// `key[]=a&key[]=b`.
        case brackets
        /// `key=a&key=b`.
        case noBrackets
        /// `key[0]=a&key[1]=b`.
        case indexInBrackets
    }

    /// How booleans are written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal
    }

    /// How `Data` is written.
    public enum DataEncoding: Sendable {
        /// Base64, the default.
        case base64
        /// As `Data`'s own `Encodable` conformance writes it (an array of bytes).
        case deferredToData
        /// By your closure.
        case custom(@Sendable (Data) throws -> String)
    }

    /// How `Date` is written.
    public enum DateEncoding: Sendable {
        /// As `Date`'s own `Encodable` conformance writes it (seconds since 2001).
        case deferredToDate
        /// Seconds since 1970, e.g. `1700000000` or `1700000000.5`.
        case secondsSince1970
        /// Milliseconds since 1970.
        case millisecondsSince1970
        /// ISO 8601 with time zone, e.g. `2026-11-21T23:17:48Z`.
        case iso8601
        /// By your closure.
        case custom(@Sendable (Date) throws -> String)
    }

    /// How keys are written.
    public enum KeyEncoding: Sendable {
        /// As the coding keys spell them.
        case useDefaultKeys
        /// `userName` becomes `user_name`.
        case convertToSnakeCase
        /// `userName` becomes `user-name`.
        case convertToKebabCase
        /// By your closure.
        case custom(@Sendable (String) -> String)

        func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: return key
            case .convertToSnakeCase: return Self.separatingWords(key, with: "_")
            case .convertToKebabCase: return Self.separatingWords(key, with: "-")
            case .custom(let transform): return transform(key)
            }
        }

        private static func separatingWords(_ key: String, with separator: Character) -> String {
            var result = ""
            var previousWasLowercaseOrDigit = false
            for character in key {
                if character.isUppercase {
                    if previousWasLowercaseOrDigit { result.append(separator) }
                    result.append(contentsOf: character.lowercased())
                    previousWasLowercaseOrDigit = false
                } else {
                    result.append(character)
                    previousWasLowercaseOrDigit = character.isLowercase || character.isNumber
                }
            }
            return result
        }
    }

    /// How spaces are written.
    public enum SpaceEncoding: Sendable {
        /// `%20`.
        case percentEscaped
        /// `+`, as HTML forms do.
        case plusReplaced
    }

    /// How array elements are named; `.brackets` by default.
    public var arrayEncoding: ArrayEncoding
    /// How booleans are written; `.numeric` by default.
    public var boolEncoding: BoolEncoding
    /// How `Data` is written; `.base64` by default.
    public var dataEncoding: DataEncoding
    /// How `Date` is written; `.deferredToDate` by default.
    public var dateEncoding: DateEncoding
    /// How keys are written; `.useDefaultKeys` by default.
    public var keyEncoding: KeyEncoding
    /// How spaces are written; `.percentEscaped` by default.
    public var spaceEncoding: SpaceEncoding
    /// Whether pairs are sorted by key (stable output, cache-friendly URLs); `true` by default.
    public var alphabetizeKeyValuePairs: Bool

    /// Creates an encoder; every option has the default described on its property.
    public init(
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dataEncoding: DataEncoding = .base64,
        dateEncoding: DateEncoding = .deferredToDate,
        keyEncoding: KeyEncoding = .useDefaultKeys,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        alphabetizeKeyValuePairs: Bool = true
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.spaceEncoding = spaceEncoding
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
    }

    /// Encodes `value`, which must encode as a keyed container (a struct or a dictionary).
    ///
    /// - Throws: ``URLEncodedFormEncoder/Failure`` if `value` is not keyed at the top level, or
    ///   what `value`'s own `encode(to:)` throws.
    public func encode(_ value: some Encodable) throws -> String {
        let root = FormNode()
        try value.encode(to: FormEncoding(node: root, codingPath: [], options: self))
        guard case .object(let members) = root.storage else { throw Failure.topLevelNotKeyed }
        var pairs: [(key: String, value: String)] = []
        for (key, node) in sortedIfNeeded(members) where !node.isUnset {
            appendPairs(of: node, name: escape(keyEncoding.encode(key)), to: &pairs)
        }
        return pairs.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
    }

    /// What can go wrong encoding a form.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The value encoded as a single value or a list; a form needs names.
        case topLevelNotKeyed

        /// A readable explanation.
        public var description: String {
            "a form needs a keyed value (a struct or a dictionary) at the top level"
        }
    }

    // MARK: - Writing pairs

    private func sortedIfNeeded(_ members: [(String, FormNode)]) -> [(String, FormNode)] {
        guard alphabetizeKeyValuePairs else { return members }
        // A stable sort: repeated keys (from a custom encode) keep their order.
        return members.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
    }

    private func appendPairs(of node: FormNode, name: String, to pairs: inout [(key: String, value: String)]) {
        switch node.storage {
        case .unset:
            pairs.append((name, ""))
        case .string(let value):
            pairs.append((name, escape(value)))
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                let elementName: String
                switch arrayEncoding {
                case .brackets: elementName = name + escape("[]")
                case .noBrackets: elementName = name
                case .indexInBrackets: elementName = name + escape("[\(index)]")
                }
                appendPairs(of: element, name: elementName, to: &pairs)
            }
        case .object(let members):
            // A nil member (a dictionary's nil value) is left out, as an absent optional
            // property is: a form has no null, and an empty value would read as "".
            for (key, member) in sortedIfNeeded(members) where !member.isUnset {
                appendPairs(of: member, name: name + escape("[\(keyEncoding.encode(key))]"), to: &pairs)
            }
        }
    }

    /// Characters left unescaped: RFC 3986 unreserved ones, plus `?` and `/` (RFC 3986 §3.4 allows them in a query).
    static let allowedCharacters: CharacterSet = {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        allowed.insert(charactersIn: "?/")
        return allowed
    }()

    func escape(_ text: String) -> String {
        let escaped = text.addingPercentEncoding(withAllowedCharacters: Self.allowedCharacters) ?? text
        return spaceEncoding == .plusReplaced ? escaped.replacingOccurrences(of: "%20", with: "+") : escaped
    }
}

extension URLEncodedFormEncoder.SpaceEncoding: Equatable {}

// MARK: - The Encoder behind it

/// A value being encoded: unset until something is written, then a string, a list or named members.
///
/// Confined to one `encode(_:)` call on one thread; never shared.
private final class FormNode {
    enum Storage {
        case unset
        case string(String)
        case array([FormNode])
        case object([(String, FormNode)])
    }

    var storage: Storage = .unset

    var isUnset: Bool {
        if case .unset = storage { return true }
        return false
    }

    func appendMember(_ key: String) -> FormNode {
        let child = FormNode()
        if case .object(var members) = storage {
            storage = .unset
            members.append((key, child))
            storage = .object(members)
        } else {
            storage = .object([(key, child)])
        }
        return child
    }

    func appendElement() -> FormNode {
        let child = FormNode()
        if case .array(var elements) = storage {
            storage = .unset
            elements.append(child)
            storage = .array(elements)
        } else {
            storage = .array([child])
        }
        return child
    }

    func makeObject() {
        if case .object = storage { return }
        storage = .object([])
    }

    func makeArray() {
        if case .array = storage { return }
        storage = .array([])
    }
}

private struct FormEncoding: Encoder {
    let node: FormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(encoding: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedContainer(encoding: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoding: self)
    }

    /// Writes `value` into `node`. Every primitive is spelled here, and the containers' own
    /// primitive methods forward to this generic path (the standard library's defaults), so a
    /// primitive never loops back into its own `encode(to:)`.
    func encode(_ value: some Encodable, into node: FormNode, at path: [any CodingKey]) throws {
        let nested = FormEncoding(node: node, codingPath: path, options: options)
        switch value {
        case let bool as Bool:
            node.storage = .string(string(for: bool))
        case let text as String:
            node.storage = .string(text)
        case let double as Double:
            node.storage = .string(Self.number(double))
        case let float as Float:
            node.storage = .string(
                float.isFinite && float == float.rounded() ? Self.number(Double(float)) : float.description
            )
        case let integer as any BinaryInteger:
            node.storage = .string(String(describing: integer))
        case let date as Date:
            switch options.dateEncoding {
            case .deferredToDate: try date.encode(to: nested)
            case .secondsSince1970: node.storage = .string(Self.number(date.timeIntervalSince1970))
            case .millisecondsSince1970: node.storage = .string(Self.number(date.timeIntervalSince1970 * 1000))
            case .iso8601: node.storage = .string(date.formatted(.iso8601))
            case .custom(let encode): node.storage = .string(try encode(date))
            }
        case let data as Data:
            switch options.dataEncoding {
            case .base64: node.storage = .string(data.base64EncodedString())
            case .deferredToData: try data.encode(to: nested)
            case .custom(let encode): node.storage = .string(try encode(data))
            }
        case let url as URL:
            node.storage = .string(url.absoluteString)
        case let decimal as Decimal:
            node.storage = .string(decimal.description)
        default:
            try value.encode(to: nested)
        }
    }

    /// A number as a server expects it: `1`, not `1.0`; `1.5` stays `1.5`.
    static func number(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            return String(Int64(value))
        }
        return value.description
    }

    func string(for value: Bool) -> String {
        switch options.boolEncoding {
        case .numeric: return value ? "1" : "0"
        case .literal: return value ? "true" : "false"
        }
    }
}

private struct FormKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoding: FormEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        _ = encoding.node.appendMember(key.stringValue)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = encoding.node.appendMember(key.stringValue)
        try encoding.encode(value, into: child, at: codingPath + [key])
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        // Absent optionals leave no pair at all, as a form has no null.
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = encoding.node.appendMember(key.stringValue)
        return FormEncoding(node: child, codingPath: codingPath + [key], options: encoding.options)
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = encoding.node.appendMember(key.stringValue)
        return FormEncoding(node: child, codingPath: codingPath + [key], options: encoding.options).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = FormKey(stringValue: "super")
        return FormEncoding(
            node: encoding.node.appendMember(key.stringValue),
            codingPath: codingPath + [key],
            options: encoding.options
        )
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        FormEncoding(
            node: encoding.node.appendMember(key.stringValue),
            codingPath: codingPath + [key],
            options: encoding.options
        )
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoding: FormEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }
    var count: Int {
        if case .array(let elements) = encoding.node.storage { return elements.count }
        return 0
    }

    mutating func encodeNil() throws {
        _ = encoding.node.appendElement()
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = FormKey(intValue: count)
        try encoding.encode(value, into: encoding.node.appendElement(), at: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let key = FormKey(intValue: count)
        return FormEncoding(
            node: encoding.node.appendElement(),
            codingPath: codingPath + [key],
            options: encoding.options
        )
        .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = FormKey(intValue: count)
        return FormEncoding(
            node: encoding.node.appendElement(),
            codingPath: codingPath + [key],
            options: encoding.options
        )
        .unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = FormKey(intValue: count)
        return FormEncoding(
            node: encoding.node.appendElement(),
            codingPath: codingPath + [key],
            options: encoding.options
        )
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoding: FormEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }

    mutating func encodeNil() throws {
        encoding.node.storage = .unset
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoding.encode(value, into: encoding.node, at: codingPath)
    }
}
