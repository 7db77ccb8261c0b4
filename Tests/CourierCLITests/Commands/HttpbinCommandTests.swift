import Foundation
import Testing

@testable import courier

/// Real httpbin's URL, when CI runs one (`HTTPBIN_URL`, set by `.ci/run`), without a final slash.
private let httpbinBaseURL = ProcessInfo.processInfo.environment["HTTPBIN_URL"].flatMap {
    $0.isEmpty ? nil : $0.hasSuffix("/") ? String($0.dropLast()) : $0
}

/// A few checks against real httpbin.
@Suite(.enabled(if: httpbinBaseURL != nil, "HTTPBIN_URL is not set"))
struct HttpbinCommandTests {
    private var base: String { httpbinBaseURL ?? "" }

    @Test(arguments: allTransports)
    func itemsReachHttpbin(transport: TransportChoice) async throws {
        let get = try await CourierRun.run(["--transport", transport.rawValue, "\(base)/get", "q==a b", "X-Demo:1"])
        #expect(get.status == 0, "\(get.errorOutput)")
        let echo = try jsonObject(get.stdout)
        #expect(echo["args"] as? [String: String] == ["q": "a b"])
        #expect((echo["headers"] as? [String: String])?["X-Demo"] == "1")

        let post = try await CourierRun.run(["--transport", transport.rawValue, "\(base)/post", "name=Ada", "n:=3"])
        #expect(post.status == 0, "\(post.errorOutput)")
        let json = try #require(try jsonObject(post.stdout)["json"] as? [String: Any])
        #expect(json["name"] as? String == "Ada")
        #expect(json["n"] as? Int == 3)

        let form = try await CourierRun.run(["--transport", transport.rawValue, "-f", "\(base)/post", "a=1"])
        #expect(try jsonObject(form.stdout)["form"] as? [String: String] == ["a": "1"])
    }

    @Test func multipartFileField() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("hello.txt")
        try Data("hello httpbin\n".utf8).write(to: file)
        let run = try await CourierRun.run(["\(base)/post", "greeting@\(file.path)", "who=me"])
        #expect(run.status == 0, "\(run.errorOutput)")
        let echo = try jsonObject(run.stdout)
        #expect(echo["files"] as? [String: String] == ["greeting": "hello httpbin\n"])
        #expect(echo["form"] as? [String: String] == ["who": "me"])
    }

    @Test func statusRedirectsAndAuth() async throws {
        #expect(try await CourierRun.run(["--check-status", "\(base)/status/418"]).status == 4)
        #expect(try await CourierRun.run(["--check-status", "\(base)/status/502"]).status == 5)
        let followed = try await CourierRun.run(["-F", "--check-status", "\(base)/redirect/2"])
        #expect(followed.status == 0, "\(followed.errorOutput)")
        let auth = try await CourierRun.run(["--check-status", "-a", "u:p", "\(base)/basic-auth/u/p"])
        #expect(auth.status == 0, "\(auth.errorOutput)")
    }

    @Test(arguments: allTransports)
    func downloadAndContinue(transport: TransportChoice) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("range")
        let length = 50_000
        // A partial file, as a killed download leaves one: the first third of the body.
        try rangePattern(length).prefix(length / 3).write(to: output)
        let run = try await CourierRun.run([
            "--transport", transport.rawValue, "-d", "-o", output.path, "-c", "\(base)/range/\(length)",
        ])
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("resuming"))
        #expect(try Data(contentsOf: output) == rangePattern(length))
    }
}
