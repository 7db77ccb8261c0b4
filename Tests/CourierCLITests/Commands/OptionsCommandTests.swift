import CourierTestServer
import Foundation
import Testing

@testable import courier

/// Each option of `courier [METHOD] URL [ITEM...]`, through the built binary.
@Suite struct OptionsCommandTests {
    @Test func basicAuthentication() async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/basic-auth/ada/s3cret").absoluteString
            let good = try await CourierRun.run(["--check-status", "-a", "ada:s3cret", url])
            #expect(good.status == 0, "\(good.errorOutput)")
            #expect(try jsonObject(good.stdout)["authenticated"] as? Bool == true)
            let bad = try await CourierRun.run(["--check-status", "--auth", "ada:wrong", url])
            #expect(bad.status == 4)
        }
    }

    /// `--har FILE` writes every exchange (here a redirect hop and the answer) as HAR 1.2, on
    /// either transport, readable by the user alone, credentials redacted; a file that cannot be
    /// written fails the run.
    @Test(arguments: ["nio", "urlsession"])
    func harRecordsTheRun(transport: String) async throws {
        try await TestServer.withRunningServer { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("har-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("run.har").path
            // A body that does not echo the request, so the token could only be in a header.
            let url = server.url("/redirect-to?url=/json").absoluteString
            let run = try await CourierRun.run(
                ["--transport", transport, "--follow", "--har", path, "--bearer", "t0ken", url]
            )
            #expect(run.status == 0, "\(run.errorOutput)")
            let archive = try jsonObject(Data(contentsOf: URL(fileURLWithPath: path)))
            let log = try #require(archive["log"] as? [String: Any])
            #expect(log["version"] as? String == "1.2")
            let entries = try #require(log["entries"] as? [[String: Any]])
            let statuses = entries.compactMap { ($0["response"] as? [String: Any])?["status"] as? Int }
            #expect(statuses == [302, 200])
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains("\"REDACTED\""))
            #expect(!text.contains("t0ken"))
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

            let missing = folder.appendingPathComponent("no/such/folder/run.har").path
            let failed = try await CourierRun.run(["--transport", transport, "--har", missing, url])
            #expect(failed.status == 1)
            #expect(failed.errorOutput.contains("cannot write the HAR file"))
        }
    }

    @Test func bearerToken() async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/bearer").absoluteString
            let good = try await CourierRun.run(["--check-status", "--bearer", "t0ken", url])
            #expect(good.status == 0, "\(good.errorOutput)")
            #expect(try jsonObject(good.stdout)["token"] as? String == "t0ken")
            #expect(try await CourierRun.run(["--check-status", url]).status == 4)
        }
    }

    @Test func printSelections() async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/post").absoluteString
            let verbose = try await CourierRun.run(["-v", url, "a=1"])
            #expect(verbose.output.hasPrefix("POST /post HTTP/1.1\nHost: 127.0.0.1:\(server.port)\n"))
            #expect(verbose.output.contains("\n\n{\"a\": \"1\"}\n\n"))
            #expect(verbose.output.contains("HTTP/1.1 200 OK\n"))
            #expect(verbose.output.hasSuffix("}\n"))

            let requestHead = try await CourierRun.run(["--print", "H", url, "a=1"])
            #expect(requestHead.output.hasPrefix("POST /post HTTP/1.1\n"))
            #expect(!requestHead.output.contains("HTTP/1.1 200"))
            #expect(!requestHead.output.contains("{\"a\""))

            let responseHead = try await CourierRun.run(["-p", "h", url, "a=1"])
            #expect(responseHead.output.hasPrefix("HTTP/1.1 200 OK\n"))
            #expect(responseHead.output.contains("Content-Type: application/json\n"))
            #expect(!responseHead.output.contains("{"))

            let headers = try await CourierRun.run(["-h", url, "a=1"])
            #expect(headers.output.hasPrefix("HTTP/1.1 200 OK\n"))
            #expect(!headers.output.contains("{"))

            let body = try await CourierRun.run(["-b", url, "a=1"])
            #expect(body.output.hasPrefix("{"))
            #expect(try jsonObject(body.stdout)["json"] as? [String: String] == ["a": "1"])

            let headAndBody = try await CourierRun.run(["-p", "hb", url, "a=1"])
            let parts = headAndBody.output.components(separatedBy: "\n\n")
            #expect(parts.first?.hasPrefix("HTTP/1.1 200 OK\n") == true)
            #expect(parts.dropFirst().joined(separator: "\n\n").hasPrefix("{"))

            let badLetters = try await CourierRun.run(["-p", "x", url])
            #expect(badLetters.status == 2)
        }
    }

    @Test func jsonFlagSendsJSON() async throws {
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run(["-j", "PATCH", server.url("/patch").absoluteString, "a=1", "b:=null"])
            #expect(run.status == 0, "\(run.errorOutput)")
            let echo = try jsonObject(run.stdout)
            #expect(echo["data"] as? String == #"{"a": "1", "b": null}"#)
        }
    }

    @Test func checkStatusExitCodes() async throws {
        try await TestServer.withRunningServer { server in
            for (path, code) in [("/status/200", Int32(0)), ("/status/302", 3), ("/status/404", 4), ("/status/503", 5)]
            {
                let run = try await CourierRun.run(["--check-status", server.url(path).absoluteString])
                #expect(run.status == code, "\(path)")
                if code != 0 { #expect(run.errorOutput.contains("HTTP \(path.dropFirst(8))"), "\(path)") }
            }
            let unchecked = try await CourierRun.run([server.url("/status/500").absoluteString])
            #expect(unchecked.status == 0)
        }
    }

    @Test(arguments: allTransports)
    func followsRedirectsWhenAsked(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/redirect/2").absoluteString
            let followed = try await CourierRun.run(["--transport", transport.rawValue, "-F", "--check-status", url])
            #expect(followed.status == 0, "\(followed.errorOutput)")
            #expect(try jsonObject(followed.stdout)["url"] as? String == server.url("/get").absoluteString)
            // Courier follows redirects itself: not following, and the limit, work over both.
            let stopped = try await CourierRun.run(["--transport", transport.rawValue, "--check-status", "-h", url])
            #expect(stopped.status == 3)
            #expect(stopped.output.hasPrefix("HTTP/1.1 302 Found\n"))
            let tooMany = try await CourierRun.run([
                "--transport", transport.rawValue, "-F", "--max-redirects", "1", url,
            ])
            #expect(tooMany.status == 1)
            #expect(tooMany.errorOutput.contains("too many redirects"))
        }
    }

    @Test(arguments: allTransports)
    func digestAuthenticationAnswersTheChallenge(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/digest-auth/auth/ada/lovelace/SHA-256").absoluteString
            let answered = try await CourierRun.run([
                "--transport", transport.rawValue, "--check-status", "-A", "digest", "-a", "ada:lovelace", url,
            ])
            #expect(answered.status == 0, "\(answered.errorOutput)")
            #expect(try jsonObject(answered.stdout)["authenticated"] as? Bool == true)
            let refused = try await CourierRun.run([
                "--transport", transport.rawValue, "--auth-type", "digest", "-a", "ada:wrong", url,
            ])
            #expect(refused.status == 1)
            #expect(!refused.errorOutput.contains("wrong"), "the password is never printed")
        }
    }

    @Test(arguments: allTransports)
    func timeoutFailsAStalledRequest(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/fault/hang?seconds=20").absoluteString
            let run = try await CourierRun.run(["--transport", transport.rawValue, "--timeout", "1", url], timeout: 15)
            #expect(run.status == 1)
            #expect(run.errorOutput.contains("timed out"), "\(run.errorOutput)")
        }
    }

    @Test(arguments: allTransports)
    func retriesWithRetryPolicy(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/fault/flaky/retry-\(transport.rawValue)?times=2&status=503").absoluteString
            let run = try await CourierRun.run(["--transport", transport.rawValue, "--retry", "3", "--timings", url])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(server.attempts(forKey: "retry-\(transport.rawValue)") == 3)
            let retries = run.errorOutput.split(separator: "\n").filter { $0.contains("retrying in") }
            #expect(retries.count == 2)
            #expect(retries.first?.contains("HTTP 503 Service Unavailable") == true)
            // The timings table: a header and one row per attempt.
            let rows = run.errorOutput.split(separator: "\n").filter { $0.first?.isNumber == true }
            #expect(rows.map { $0.split(separator: " ")[1] } == ["503", "503", "200"])
        }
    }

    @Test func retriesGiveUpWithTheLastStatus() async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/fault/flaky/give-up?times=5&status=503").absoluteString
            let run = try await CourierRun.run(["--retry", "1", "--check-status", "-h", url])
            #expect(run.status == 5)
            #expect(run.output.hasPrefix("HTTP/1.1 503 Service Unavailable\n"))
            #expect(run.errorOutput.contains("gave up after 2 attempts"))
        }
    }

    @Test(arguments: allTransports)
    func retriesGiveUpPrintingTheLastBody(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let key = "body-\(transport.rawValue)"
            let url = server.url("/fault/flaky/\(key)?times=5&status=503").absoluteString
            let run = try await CourierRun.run(["--transport", transport.rawValue, "--retry", "1", "-b", url])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(server.attempts(forKey: key) == 2)
            // The last answer is printed as any answer is: its body, whole.
            #expect(try jsonObject(run.stdout)["attempts"] as? Int == 2)
            #expect(
                run.errorOutput.hasSuffix(
                    "courier: gave up after 2 attempts: the last answered HTTP 503 Service Unavailable\n"
                ),
                "\(run.errorOutput)"
            )
        }
    }

    @Test(arguments: allTransports)
    func aPostIsNotRetriedAndSaysSo(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let key = "post-\(transport.rawValue)"
            let url = server.url("/fault/flaky/\(key)?times=5&status=503").absoluteString
            let run = try await CourierRun.run(["--transport", transport.rawValue, "--retry", "3", "-b", url, "a=1"])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(server.attempts(forKey: key) == 1)
            #expect(try jsonObject(run.stdout)["attempts"] as? Int == 1)
            #expect(run.errorOutput.contains("HTTP 503 Service Unavailable was not retried: POST is not idempotent"))
            #expect(run.errorOutput.contains("(1 attempt made)"), "\(run.errorOutput)")
            #expect(!run.errorOutput.contains("gave up"))
            // With an Idempotency-Key, it is.
            let keyed = "keyed-\(transport.rawValue)"
            let opted = try await CourierRun.run([
                "--transport", transport.rawValue, "--retry", "3", "-b",
                server.url("/fault/flaky/\(keyed)?times=1&status=503").absoluteString, "a=1", "Idempotency-Key:k1",
            ])
            #expect(opted.status == 0, "\(opted.errorOutput)")
            #expect(server.attempts(forKey: keyed) == 2)
        }
    }

    @Test(arguments: allTransports)
    func maxTimeBoundsTheWholeExchange(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let hang = server.url("/fault/hang?seconds=20").absoluteString
            let run = try await CourierRun.run(
                ["--transport", transport.rawValue, "--max-time", "1", hang],
                timeout: 15
            )
            #expect(run.status == 1)
            #expect(run.errorOutput.contains("did not finish within --max-time 1s"), "\(run.errorOutput)")
            // A retry that would start after it is not made: the answer so far is the answer.
            let key = "deadline-\(transport.rawValue)"
            let waits = server.url("/fault/retry-after/\(key)?times=5&seconds=30").absoluteString
            let retried = try await CourierRun.run(
                ["--transport", transport.rawValue, "--retry", "3", "--max-time", "5", "-h", waits],
                timeout: 15
            )
            #expect(retried.status == 0, "\(retried.errorOutput)")
            #expect(retried.output.hasPrefix("HTTP/1.1 503 Service Unavailable\n"))
            #expect(
                retried.errorOutput.contains("gave up after 1 attempt, before the retry limit"),
                "\(retried.errorOutput)"
            )
            #expect(server.attempts(forKey: key) == 1)
        }
    }

    @Test(arguments: allTransports)
    func connectTimeoutLetsAConnectionThrough(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, "--connect-timeout", "5", "--check-status",
                server.url("/get").absoluteString,
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            let refused = try await CourierRun.run([
                "--transport", transport.rawValue, "--connect-timeout", "5", "http://127.0.0.1:9/",
            ])
            #expect(refused.status == 1)
            #expect(refused.errorOutput.contains("connection refused"), "\(refused.errorOutput)")
        }
    }

    @Test func attemptTimeoutOnURLSessionIsCappedByTheConnectTimeout() throws {
        var options = ClientOptions(plan: try RequestPlan.make(arguments: [":1/"]), selection: [])
        options.timeout = 30
        options.connectTimeout = 5
        #expect(options.attemptTimeout == 30, "AsyncHTTPClient bounds connecting on its own")
        options.transport = .urlsession
        #expect(options.attemptTimeout == 5)
        options.connectTimeout = nil
        #expect(options.attemptTimeout == 30)
    }

    @Test(arguments: allTransports)
    func localhostShorthandKeepsAURLInItsQuery(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let target = server.url("/get").absoluteString
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, "-F", "--check-status", ":\(server.port)/redirect-to?url=\(target)",
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(try jsonObject(run.stdout)["url"] as? String == target)
        }
    }

    @Test(arguments: allTransports)
    func credentialsInTheURLAreBasicAuthentication(transport: TransportChoice) async throws {
        try await TestServer.withRunningServer { server in
            let url = "http://ada:s3cret@127.0.0.1:\(server.port)/basic-auth/ada/s3cret"
            let run = try await CourierRun.run(["--transport", transport.rawValue, "--check-status", url])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(try jsonObject(run.stdout)["authenticated"] as? Bool == true)
        }
    }

    @Test func offlinePrintsWithoutSending() async throws {
        try await TestServer.withRunningServer { server in
            let url = server.url("/fault/flaky/offline").absoluteString
            let run = try await CourierRun.run(["--offline", url, "a=1", "X-Trace:7"])
            #expect(run.status == 0)
            #expect(run.output.hasPrefix("POST /fault/flaky/offline HTTP/1.1\nHost: 127.0.0.1:\(server.port)\n"))
            #expect(run.output.contains("X-Trace: 7\n"))
            #expect(run.output.contains("Content-Length: 10\n"))
            #expect(run.output.hasSuffix("\n\n{\"a\": \"1\"}\n\n"))
            #expect(server.attempts(forKey: "offline") == 0)
        }
    }

    @Test func connectionRefusedIsOneLineAndExitOne() async throws {
        let run = try await CourierRun.run(["http://127.0.0.1:9/get"])
        #expect(run.status == 1)
        #expect(run.errorOutput == "courier: error: could not connect to 127.0.0.1:9 (connection refused)\n")
        #expect(run.stdout.isEmpty)
    }

    @Test(arguments: [
        ["--frobnicate", ":1/get"], [], [":1/get", "bad item"], ["--retry", "-1", ":1/"], ["-c", ":1/"],
        ["-f", "-j", ":1/", "a=1"], ["-o", "file", ":1/"], ["--timeout", "0", ":1/"],
        ["--timeout", "inf", ":1/"], ["--max-time", "nan", ":1/"], ["--max-time", "-1", ":1/"],
        ["--connect-timeout", "0", ":1/"], ["--connect-timeout", "1e300", ":1/"],
    ])
    func badArgumentsExitTwoWithUsage(arguments: [String]) async throws {
        let run = try await CourierRun.run(arguments)
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("Usage: courier"), "\(run.errorOutput)")
    }

    @Test func versionAndHelp() async throws {
        let version = try await CourierRun.run(["--version"])
        #expect(version.status == 0)
        #expect(!version.output.isEmpty)
        let help = try await CourierRun.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("-h, --headers"))
        #expect(help.output.contains("--transport"))
        #expect(help.output.contains("--max-time <seconds>"))
        #expect(help.output.contains("--connect-timeout <seconds>"))
    }

    @Test func redirectedOutputIsExactBytes() async throws {
        try await TestServer.withRunningServer { server in
            let pattern = try await CourierRun.run([server.url("/range/300000").absoluteString])
            #expect(pattern.stdout == rangePattern(300_000))
            // Random bytes (NULs included) come through untouched: the same seed, the same bytes.
            let first = try await CourierRun.run([server.url("/bytes/5000?seed=42").absoluteString])
            let second = try await CourierRun.run([
                "--transport", "urlsession", server.url("/bytes/5000?seed=42").absoluteString,
            ])
            #expect(first.stdout.count == 5000)
            #expect(first.stdout == second.stdout)
            #expect(!first.output.contains("binary data"))
        }
    }
}
