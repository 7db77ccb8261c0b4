import CourierTestServer
import Foundation
import Testing

@testable import courier

/// What `courier` draws on a real terminal (under tmux), and that a pipe gets none of it.
@Suite struct TerminalOutputTests {
    private static let escape = "\u{1B}["

    @Test(.enabled(if: TmuxSession.isAvailable, "tmux is not on PATH"))
    func coloursAndProgressBarOnATerminal() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = try CourierBinary.url().path
        try await TestServer.withRunningServer { server in
            let marker = "COURIER-TMUX-DONE"
            let output = folder.appendingPathComponent("slow.txt").path
            let command = [
                "\(binary) \(server.url("/json").absoluteString)",
                "\(binary) \(server.url("/bytes/100").absoluteString)",
                "\(binary) -d -o \(output) '\(server.url("/range/300000?duration=1&chunk_size=3000").absoluteString)'",
                "echo \(marker) $?",
                "read line",
            ].joined(separator: "; ")
            let session = try await TmuxSession.start(command: command, in: folder)
            var screen = ""
            // tmux sends no notice of what it draws: poll its screen until the marker, bounded.
            let deadline = ContinuousClock.now + .seconds(30)
            while !screen.contains("\(marker) 0"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                screen = (try? await session.capture()) ?? ""
            }
            await session.kill()
            let finished = screen.contains("\(marker) 0")
            #expect(finished, "the pane shows:\n\(screen)")
            // The head and the JSON body, coloured.
            #expect(screen.contains("200 OK"))
            #expect(screen.contains("\"slideshow\""))
            #expect(screen.contains(Self.escape), "no escape codes in:\n\(screen)")
            // Binary data is not dumped.
            #expect(screen.contains("binary data, 100 bytes, not shown"))
            // The download's bar (its last frame stays) and the summary.
            #expect(screen.contains("100% "))
            #expect(screen.contains("█"))
            #expect(screen.contains("293.0 KiB"))
            #expect(screen.contains("Saved \(output)"))
        }
    }

    @Test func pipesGetNoColoursAndNoBar() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await TestServer.withRunningServer { server in
            let json = try await CourierRun.run([server.url("/json").absoluteString])
            #expect(json.status == 0)
            #expect(!json.output.contains(Self.escape))
            #expect(!json.output.contains("HTTP/1.1"))
            #expect(try jsonObject(json.stdout)["slideshow"] != nil)

            let verbose = try await CourierRun.run(["-v", server.url("/json").absoluteString])
            #expect(!verbose.output.contains(Self.escape))

            let output = folder.appendingPathComponent("file").path
            let download = try await CourierRun.run(["-d", "-o", output, server.url("/range/30000").absoluteString])
            #expect(download.status == 0)
            #expect(!download.errorOutput.contains(Self.escape))
            #expect(!download.errorOutput.contains("█"))
            #expect(download.errorOutput.split(separator: "\n").count == 1)
        }
    }
}
