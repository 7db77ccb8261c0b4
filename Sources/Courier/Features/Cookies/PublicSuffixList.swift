import Foundation

/// The domains under which anyone may register a name (`com`, `co.uk`, `github.io`), read from
/// the Public Suffix List's format (<https://publicsuffix.org/list/>): what a ``CookieJar``
/// checks a `Set-Cookie`'s `Domain` against, so that `www.example.co.uk` cannot set a cookie for
/// every `co.uk` site (RFC 6265 §5.3, step 5).
///
/// ``system`` reads the copy a Linux distribution installs (Debian's and Ubuntu's `publicsuffix`
/// package, Fedora's `publicsuffix-list`); where there is none, it holds no rules, and the jar
/// accepts any `Domain` of more than one label that domain-matches the host, as before. Make one
/// from a copy of your own with ``init(rules:)`` or ``init(contentsOf:)`` to be sure of it.
///
/// Rules are compared as ASCII: a host is in its ASCII (`xn--`) form in a URL, so a rule written
/// in Unicode in the list matches no host and protects nothing; ASCII rules are most of the list.
public struct PublicSuffixList: Sendable {
    /// A list's rules, by kind: `co.uk`, `*.ck` (kept as `ck`), `!www.ck` (kept as `www.ck`).
    struct Rules: Sendable {
        var exact: Set<String> = []
        var wildcardParents: Set<String> = []
        var exceptions: Set<String> = []

        var isEmpty: Bool { exact.isEmpty && wildcardParents.isEmpty }
    }

    private let rules: @Sendable () -> Rules
    /// Whether this is ``system``, whose rules are read on first use.
    let isSystem: Bool

    /// The longest list file read, in bytes: the real list is about 300 KiB.
    public static let maximumFileSize = 16 * 1024 * 1024

    /// A list of `rules`, in the Public Suffix List's format: one rule per line (`co.uk`, a
    /// wildcard `*.ck`, an exception `!www.ck`), `//` comments and blank lines ignored, and
    /// anything after a rule's first whitespace ignored.
    public init(rules: String) {
        let parsed = Self.parse(rules)
        self.rules = { parsed }
        isSystem = false
    }

    /// A list read from a file in the Public Suffix List's format.
    ///
    /// - Throws: The error reading the file, or ``CourierError/Kind/bufferLimitExceeded`` for a
    ///   file larger than ``maximumFileSize``.
    public init(contentsOf url: URL) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        // One byte past the limit tells a file that is too large, without reading it all (a
        // pipe or a device has no size to ask first).
        let data = try handle.read(upToCount: Self.maximumFileSize + 1) ?? Data()
        guard data.count <= Self.maximumFileSize else {
            throw CourierError.bufferLimitExceeded(limit: Self.maximumFileSize)
        }
        self.init(rules: String(decoding: data, as: UTF8.self))
    }

    private init(loadingSystemRules rules: @escaping @Sendable () -> Rules) {
        self.rules = rules
        isSystem = true
    }

    /// The list the system installs: Debian's, Ubuntu's and Fedora's paths are tried. Empty
    /// where none is installed (as on Apple platforms). Read once per process, in the background
    /// when the first ``CookieJar`` using it is made, so that a response's cookies (on an event
    /// loop, with AsyncHTTPClient) seldom wait for it.
    public static let system = PublicSuffixList(loadingSystemRules: { systemRules })

    /// A list with no rules: any `Domain` of more than one label passes.
    public static let empty = PublicSuffixList(rules: "")

    /// Starts reading the system's list off the caller's thread, once.
    static let startLoadingSystemRules: Void = {
        DispatchQueue.global(qos: .utility).async { _ = systemRules }
    }()

    private static let systemRules: Rules = {
        for path in [
            "/usr/share/publicsuffix/public_suffix_list.dat", "/usr/share/publicsuffix/effective_tld_names.dat",
        ] {
            guard FileManager.default.isReadableFile(atPath: path),
                let list = try? PublicSuffixList(contentsOf: URL(fileURLWithPath: path))
            else { continue }
            let rules = list.rules()
            if !rules.isEmpty { return rules }
        }
        return Rules()
    }()

    /// Whether the list holds any rule.
    public var isEmpty: Bool { rules().isEmpty }

    /// Whether `domain` (ASCII, any case, without a leading dot) is a public suffix: named by a
    /// rule, or by a wildcard over its parent, and not by an exception. A single label that no
    /// rule names is not one here (the jar refuses single labels on its own).
    public func isPublicSuffix(_ domain: String) -> Bool {
        let rules = rules()
        guard !rules.isEmpty else { return false }
        var domain = domain.lowercased()
        // `co.uk.` is `co.uk`, fully qualified.
        if domain.hasSuffix(".") { domain.removeLast() }
        if rules.exceptions.contains(domain) { return false }
        if rules.exact.contains(domain) { return true }
        guard let dot = domain.firstIndex(of: ".") else { return false }
        return rules.wildcardParents.contains(String(domain[domain.index(after: dot)...]))
    }

    /// Reads the rules, in one pass over the text.
    static func parse(_ text: String) -> Rules {
        var rules = Rules()
        for line in text.split(whereSeparator: \.isNewline) {
            guard let token = line.split(whereSeparator: \.isWhitespace).first, !token.hasPrefix("//") else { continue }
            var rule = token.lowercased()
            if rule.hasPrefix(".") { rule.removeFirst() }
            guard !rule.isEmpty else { continue }
            if rule.hasPrefix("!") {
                rules.exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                rules.wildcardParents.insert(String(rule.dropFirst(2)))
            } else {
                rules.exact.insert(rule)
            }
        }
        return rules
    }
}
