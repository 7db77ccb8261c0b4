import CourierTestServer
import Foundation
import Testing

@testable import courier

/// Each kind of request item, through the built binary, on both transports.
@Suite struct RequestItemsCommandTests {
    @Test(arguments: allTransports)
    func headersAndQuery(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, server.url("/get").absoluteString,
                "X-Custom:a:b", "X-Empty:", "q==a b&c", "n==1",
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            let echo = try jsonObject(run.stdout)
            let headers = try #require(echo["headers"] as? [String: String])
            #expect(headers["X-Custom"] == "a:b")
            #expect(headers["X-Empty"] == "")
            #expect(echo["args"] as? [String: String] == ["q": "a b&c", "n": "1"])
        }
    }

    @Test(arguments: allTransports)
    func jsonFieldsMakeAPost(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, server.url("/post").absoluteString,
                "name=Ada", "count:=3", "tags:=[\"a\"]", "ok:=true",
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            let echo = try jsonObject(run.stdout)
            let json = try #require(echo["json"] as? [String: Any])
            #expect(json["name"] as? String == "Ada")
            #expect(json["count"] as? Int == 3)
            #expect(json["tags"] as? [String] == ["a"])
            #expect(json["ok"] as? Bool == true)
            #expect(echo["data"] as? String == #"{"name": "Ada", "count": 3, "tags": ["a"], "ok": true}"#)
            #expect((echo["headers"] as? [String: String])?["Content-Type"] == "application/json")
        }
    }

    @Test(arguments: allTransports)
    func formFields(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, "--form", "PUT", server.url("/put").absoluteString,
                "a=1 2", "b=x&y",
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            let echo = try jsonObject(run.stdout)
            #expect(echo["form"] as? [String: String] == ["a": "1 2", "b": "x&y"])
        }
    }

    @Test(arguments: allTransports)
    func fileFieldMakesMultipart(transport: TransportChoice) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("note.txt")
        try Data("hello, part\n".utf8).write(to: file)
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, server.url("/post").absoluteString,
                "title=Notes", "attachment@\(file.path)",
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            let echo = try jsonObject(run.stdout)
            #expect(echo["form"] as? [String: String] == ["title": "Notes"])
            #expect(echo["files"] as? [String: String] == ["attachment": "hello, part\n"])
            let contentType = (echo["headers"] as? [String: String])?["Content-Type"] ?? ""
            #expect(contentType.hasPrefix("multipart/form-data; boundary="))
        }
    }

    @Test(arguments: allTransports)
    func fileAsTheWholeBody(transport: TransportChoice) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body.bin")
        let body = rangePattern(70_000)
        try body.write(to: file)
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, server.url("/upload").absoluteString, "@\(file.path)",
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            let receipt = try jsonObject(run.stdout)
            #expect(receipt["bytes"] as? Int == body.count)
        }
    }

    @Test func missingFileFailsWithOneLine() async throws {
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([server.url("/post").absoluteString, "f@/nonexistent/file.txt"])
            #expect(run.status == 1)
            #expect(run.errorOutput.hasPrefix("courier: error: "))
            #expect(run.errorOutput.split(separator: "\n").count == 1)
        }
    }

    /// A header value RFC 9110 forbids fails the run (exit 1) before anything is sent, naming the
    /// header but never printing the value; FoundationNetworking's `setValue` would have dropped
    /// one with a line break and sent the request without it.
    @Test(arguments: allTransports)
    func invalidHeaderValuesFailWithoutPrintingThem(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let secret = "s3cr3t-t0ken"
            let url = server.url("/headers").absoluteString
            let runs: [(arguments: [String], header: String)] = [
                (["--bearer", "\(secret)\u{7F}", url], "Authorization"),
                (["--bearer", "\(secret)\r\nX-Injected: 1", url], "Authorization"),
                ([url, "X-A:bad\u{7F}\(secret)"], "X-A"),
                ([url, "Authorization:Bearer \(secret)\n"], "Authorization"),
            ]
            for (arguments, header) in runs {
                let run = try await CourierRun.run(["--transport", transport.rawValue] + arguments)
                #expect(run.status == 1, "\(arguments): \(run.errorOutput)")
                #expect(run.errorOutput.contains("\"\(header)\""), "\(run.errorOutput)")
                #expect(!run.errorOutput.contains(secret) && !run.output.contains(secret))
            }
            await #expect(throws: TestServerError.timedOut, "nothing reached the server") {
                try await server.waitForRequests(1, timeout: .milliseconds(100))
            }
        }
    }
}
