import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The public suffix list's rules, and the jar refusing a `Domain` that names one.
@Suite struct PublicSuffixListTests {
    private static let list = PublicSuffixList(
        rules: """
            // ===BEGIN ICANN DOMAINS===
            uk
            co.uk
            *.ck
            !www.ck
            com   trailing words are ignored

            // ===BEGIN PRIVATE DOMAINS===
            GitHub.io
            .blogspot.com
            """
    )

    @Test(arguments: [
        ("co.uk", true), ("CO.UK", true), ("uk", true), ("example.co.uk", false),
        ("anything.ck", true), ("www.ck", false), ("a.www.ck", false), ("ck", false),
        ("github.io", true), ("user.github.io", false), ("blogspot.com", true), ("com", true),
        ("example.com", false), ("trailing", false), ("co.uk.", true), ("example.co.uk.", false),
    ])
    func namesThePublicSuffixes(domain: String, isPublic: Bool) {
        #expect(Self.list.isPublicSuffix(domain) == isPublic)
    }

    /// Where the system installs the list (Debian's `publicsuffix`), the default jar uses it.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/publicsuffix/public_suffix_list.dat")))
    func theSystemsListIsRead() throws {
        #expect(!PublicSuffixList.system.isEmpty)
        #expect(PublicSuffixList.system.isPublicSuffix("co.uk"))
        #expect(!PublicSuffixList.system.isPublicSuffix("example.co.uk"))
        let jar = CookieJar()
        jar.store(
            setCookieFields: ["wide=1; Domain=co.uk"],
            from: try #require(URL(string: "https://www.example.co.uk/"))
        )
        #expect(jar.allCookies.isEmpty)
    }

    @Test func anEmptyListNamesNothing() {
        #expect(PublicSuffixList.empty.isEmpty)
        #expect(!PublicSuffixList.empty.isPublicSuffix("co.uk"))
        #expect(PublicSuffixList(rules: "// only a comment\n\n").isEmpty)
    }

    @Test func aFileIsReadAndAMissingOneThrows() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-psl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("list.dat")
        try Data("co.uk\n".utf8).write(to: file)
        #expect(try PublicSuffixList(contentsOf: file).isPublicSuffix("co.uk"))
        #expect(throws: (any Error).self) { try PublicSuffixList(contentsOf: folder.appendingPathComponent("missing")) }
    }

    /// RFC 6265 §5.3, step 5: a public suffix as `Domain` is refused, or host-only from that very host.
    @Test func theJarRefusesAPublicSuffixAsDomain() throws {
        let jar = CookieJar(publicSuffixes: Self.list)
        let site = try #require(URL(string: "https://www.example.co.uk/"))
        jar.store(setCookieFields: ["wide=1; Domain=co.uk", "own=2; Domain=example.co.uk"], from: site)
        #expect(jar.allCookies.map(\.name) == ["own"])
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://other.co.uk/"))) == nil)
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://shop.example.co.uk/"))) == "own=2")

        let tenant = try #require(URL(string: "https://evil.github.io/"))
        jar.store(setCookieFields: ["fixed=1; Domain=github.io"], from: tenant)
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://victim.github.io/"))) == nil)

        // From the suffix's own host, the cookie stays with that host.
        let registry = try #require(URL(string: "https://github.io/"))
        jar.store(setCookieFields: ["self=1; Domain=github.io"], from: registry)
        #expect(jar.allCookies.first { $0.name == "self" }?.isHostOnly == true)
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://victim.github.io/"))) == nil)

        // Without a list, as before: accepted.
        let open = CookieJar(publicSuffixes: .empty)
        open.store(setCookieFields: ["wide=1; Domain=co.uk"], from: site)
        #expect(open.cookieHeader(for: try #require(URL(string: "https://other.co.uk/"))) == "wide=1")
    }

    @Test func theAdapterRefusesAPublicSuffixAsDomain() throws {
        let storage = try #require(URLSessionConfiguration.ephemeral.httpCookieStorage)
        let adapter = HTTPCookieStorageAdapter(storage, publicSuffixes: Self.list)
        let site = try #require(URL(string: "https://www.example.co.uk/"))
        adapter.store(setCookieFields: ["wide=1; Domain=co.uk", "own=2; Domain=example.co.uk"], from: site)
        #expect(adapter.cookieHeader(for: try #require(URL(string: "https://other.co.uk/"))) == nil)
        #expect(adapter.cookieHeader(for: try #require(URL(string: "https://shop.example.co.uk/"))) == "own=2")
        // One the storage got elsewhere, for the whole suffix, is not sent under it.
        let planted = try #require(
            HTTPCookie(properties: [.name: "planted", .value: "1", .domain: ".co.uk", .path: "/"])
        )
        storage.setCookie(planted)
        #expect(adapter.cookieHeader(for: try #require(URL(string: "https://other.co.uk/"))) == nil)
    }
}
