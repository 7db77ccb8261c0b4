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
        /// The name your closure makes of the array's name and the element's index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        /// The name of the element at `index` of the array named `key`.
        func encode(_ key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: return key + "[]"
            case .noBrackets: return key
            case .indexInBrackets: return key + "[\(index)]"
            case .custom(let encode): return encode(key, index)
            }
        }
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
        /// By the formatter given.
        case formatted(DateFormatter)
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
        /// The first letter upper-cased: `userName` becomes `UserName`.
        case capitalized
        /// Every letter upper-cased: `userName` becomes `USERNAME`.
        case uppercased
        /// Every letter lower-cased: `userName` becomes `username`.
        case lowercased
        /// By your closure.
        case custom(@Sendable (String) -> String)

        func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: return key
            case .convertToSnakeCase: return Self.separatingWords(key, with: "_")
            case .convertToKebabCase: return Self.separatingWords(key, with: "-")
            case .capitalized: return key.prefix(1).uppercased() + key.dropFirst()
            case .uppercased: return key.uppercased()
            case .lowercased: return key.lowercased()
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

    /// How the keys of a nested object follow its name: `parent[child]` (`.brackets`, the
    /// default) or `parent.child` (`.dots`), or as your closure writes each one.
    public struct KeyPathEncoding: Sendable {
        /// `parent[child][grandchild]`.
        public static let brackets = KeyPathEncoding { "[\($0)]" }
        /// `parent.child.grandchild`.
        public static let dots = KeyPathEncoding { ".\($0)" }

        private let encoding: @Sendable (_ subkey: String) -> String

        /// An encoding that appends `encoding(subkey)` to the parent's name for each nested key.
        public init(encoding: @escaping @Sendable (_ subkey: String) -> String) {
            self.encoding = encoding
        }

        func encodeKeyPath(_ subkey: String) -> String { encoding(subkey) }
    }

    /// How a `nil` value is written: left out with its key (`.dropKey`, the default), as an empty
    /// value (`.dropValue`: `key=`), as `null` (`.null`), or as your closure says.
    ///
    /// It applies to `nil` optionals, `nil` dictionary values and `nil` array elements alike.
    public struct NilEncoding: Sendable {
        /// No pair at all.
        public static let dropKey = NilEncoding { nil }
        /// The key with an empty value: `key=`.
        public static let dropValue = NilEncoding { "" }
        /// `key=null`.
        public static let null = NilEncoding { "null" }

        private let encoding: @Sendable () -> String?

        /// An encoding writing `encoding()` as the value, or no pair when it returns `nil`.
        public init(encoding: @escaping @Sendable () -> String?) {
            self.encoding = encoding
        }

        func encodeNil() -> String? { encoding() }
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
    /// How nested keys follow their parent's name; `.brackets` by default.
    public var keyPathEncoding: KeyPathEncoding
    /// How `nil` values are written; `.dropKey` by default.
    public var nilEncoding: NilEncoding
    /// How spaces are written; `.percentEscaped` by default.
    public var spaceEncoding: SpaceEncoding
    /// Whether pairs are sorted by key (stable output, cache-friendly URLs); `true` by default.
    public var alphabetizeKeyValuePairs: Bool
    /// The characters written as they are; every other one is percent-escaped.
    /// ``defaultAllowedCharacters`` by default.
    public var allowedCharacters: CharacterSet

    /// Creates an encoder; every option has the default described on its property.
    public init(
        alphabetizeKeyValuePairs: Bool = true,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dataEncoding: DataEncoding = .base64,
        dateEncoding: DateEncoding = .deferredToDate,
        keyEncoding: KeyEncoding = .useDefaultKeys,
        keyPathEncoding: KeyPathEncoding = .brackets,
        nilEncoding: NilEncoding = .dropKey,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        allowedCharacters: CharacterSet = URLEncodedFormEncoder.defaultAllowedCharacters
    ) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
        self.allowedCharacters = allowedCharacters
    }

    /// Encodes `value` as the `String` form of `encode(_:)` does, as UTF-8 bytes: Alamofire's
    /// `Data` form. Disfavoured, so `let form = try encoder.encode(value)` stays a `String`;
    /// write `let body: Data = try encoder.encode(value)` for this one.
    @_disfavoredOverload
    public func encode(_ value: some Encodable) throws -> Data {
        let form: String = try encode(value)
        return Data(form.utf8)
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
        for (key, node) in sortedIfNeeded(members) {
            appendPairs(of: node, name: keyEncoding.encode(key), to: &pairs)
        }
        return pairs.map { "\(escape($0.key))=\(escape($0.value))" }.joined(separator: "&")
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

    /// Appends the pairs `node` makes under `name`, unescaped: escaping each character on its
    /// own, the whole name is escaped once at the end, so a custom array or key-path encoding
    /// sees plain names.
    private func appendPairs(of node: FormNode, name: String, to pairs: inout [(key: String, value: String)]) {
        switch node.storage {
        case .unset:
            // Nothing was written for it (an encoder that made a member and left it): no pair.
            break
        case .null:
            if let value = nilEncoding.encodeNil() { pairs.append((name, value)) }
        case .string(let value):
            pairs.append((name, value))
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                appendPairs(of: element, name: arrayEncoding.encode(name, atIndex: index), to: &pairs)
            }
        case .object(let members):
            for (key, member) in sortedIfNeeded(members) {
                appendPairs(of: member, name: name + keyPathEncoding.encodeKeyPath(keyEncoding.encode(key)), to: &pairs)
            }
        }
    }

    /// The characters a form writes as they are by default: RFC 3986's unreserved ones, plus `?`
    /// and `/` (RFC 3986 §3.4 allows them in a query). Alamofire's `afURLQueryAllowed`.
    public static let defaultAllowedCharacters: CharacterSet = {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        allowed.insert(charactersIn: "?/")
        return allowed
    }()

    func escape(_ text: String) -> String {
        let escaped = text.addingPercentEncoding(withAllowedCharacters: allowedCharacters) ?? text
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
        /// An explicit `nil`, written as ``URLEncodedFormEncoder/nilEncoding`` says.
        case null
        case string(String)
        case array([FormNode])
        case object([(String, FormNode)])
    }

    var storage: Storage = .unset

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
            case .formatted(let formatter): node.storage = .string(formatter.string(from: date))
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
        encoding.node.appendMember(key.stringValue).storage = .null
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = encoding.node.appendMember(key.stringValue)
        try encoding.encode(value, into: child, at: codingPath + [key])
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        // An absent optional is a nil like any other: `nilEncoding` says how it is written (by
        // default it leaves no pair, as a form has no null).
        try encodeOptional(value, forKey: key)
    }

    // The standard library's primitive `encodeIfPresent` defaults skip a nil without calling
    // `encodeNil(forKey:)`, and synthesized conformances call them for optional primitives; each
    // goes through the generic form, so that `nilEncoding` applies to them too.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return try encodeNil(forKey: key) }
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
        encoding.node.appendElement().storage = .null
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
        encoding.node.storage = .null
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoding.encode(value, into: encoding.node, at: codingPath)
    }
}
