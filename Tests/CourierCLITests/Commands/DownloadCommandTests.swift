import CourierTestServer
import Foundation
import Testing

@testable import courier

/// `--download`, `--output` and `--continue`, through the built binary.
@Suite struct DownloadCommandTests {
    @Test(arguments: allTransports)
    func downloadsToTheOutputFile(transport: TransportChoice) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("pattern.txt")
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run([
                "--transport", transport.rawValue, "-d", "-o", output.path, server.url("/range/250000").absoluteString,
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(try Data(contentsOf: output) == rangePattern(250_000))
            #expect(run.stdout.isEmpty)
            // stderr is not a terminal: no bar, no escape codes, only the summary.
            #expect(run.errorOutput.hasPrefix("Saved \(output.path): 244.1 KiB in "))
            #expect(!run.errorOutput.contains("\u{1B}["))
            #expect(!run.errorOutput.contains("\r"))
        }
    }

    @Test func namesTheFileAfterTheURLWithoutOverwriting() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("keep".utf8).write(to: folder.appendingPathComponent("1000"))
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run(
                ["--download", server.url("/range/1000").absoluteString],
                workingDirectory: folder
            )
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(try Data(contentsOf: folder.appendingPathComponent("1000")) == Data("keep".utf8))
            #expect(try Data(contentsOf: folder.appendingPathComponent("1000-1")) == rangePattern(1000))
        }
    }

    @Test func anErrorStatusSavesNothing() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("missing")
        try await TestServer.withRunningServer { server in
            let run = try await CourierRun.run(["-d", "-o", output.path, server.url("/status/404").absoluteString])
            #expect(run.status == 4)
            #expect(run.errorOutput.contains("HTTP 404 Not Found"))
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    @Test(arguments: allTransports)
    func continuesAKilledDownload(transport: TransportChoice) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("slow.txt")
        let length = 200_000
        try await TestServer.withRunningServer { server in
            // 100 chunks over 5 s (the resumed request is paced the same): killed after the first.
            let url = server.url("/range/\(length)?duration=5&chunk_size=2000").absoluteString
            let first = try RunningCourier(["--transport", transport.rawValue, "-d", "-o", output.path, url])
            // Generous bounds: they are reached only when the machine is loaded.
            let started = await first.kill(timeout: 30) { fileSize(output) >= 2000 }
            let killed = await first.wait(timeout: 30)
            #expect(started)
            #expect(killed?.status == 128 + SIGKILL)
            let partial = fileSize(output)
            #expect(partial > 0 && partial < length, "partial file of \(partial) bytes")

            let resumed = try await CourierRun.run(
                ["--transport", transport.rawValue, "-d", "-o", output.path, "--continue", url],
                timeout: 20
            )
            #expect(resumed.status == 0, "\(resumed.errorOutput)")
            #expect(resumed.errorOutput.contains("resuming \(output.path) at "))
            #expect(try Data(contentsOf: output) == rangePattern(length))

            let again = try await CourierRun.run([
                "--transport", transport.rawValue, "-d", "-o", output.path, "-c", url,
            ])
            #expect(again.status == 0, "\(again.errorOutput)")
            #expect(again.errorOutput.contains("already complete"))
            #expect(try Data(contentsOf: output) == rangePattern(length))
        }
    }

    @Test func continueStartsOverWhenTheServerIgnoresRanges() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("bytes")
        try Data("stale".utf8).write(to: output)
        try await TestServer.withRunningServer { server in
            // /bytes ignores Range and sends 200 with the whole body.
            let run = try await CourierRun.run([
                "-d", "-o", output.path, "-c", server.url("/bytes/3000?seed=1").absoluteString,
            ])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(run.errorOutput.contains("starting over"))
            #expect(fileSize(output) == 3000)
        }
    }
}
