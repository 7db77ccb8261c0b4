import ArgumentParser
import CourierTestServer
import Foundation

/// `courier demo`: a one-minute tour of Courier against the embedded test server, printing each
/// step's code and its live result. It starts the server on a free port, works in a temporary
/// folder, and removes both before it exits.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through Courier against the embedded test server, step by step."
    )

    func run() async throws {
        let terminal = Terminal.current()
        // Courier keeps partial downloads in a per-user folder its processes share (named as
        // `DownloadFile.folderName` names it); if the demo is what made it, the demo removes it
        // again (only when empty: rmdir never removes files).
        let downloads = FileManager.default.temporaryDirectory.appendingPathComponent("CourierDownloads-\(geteuid())")
        let downloadsExisted = FileManager.default.fileExists(atPath: downloads.path)
        let server = try await TestServer.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(UUID().uuidString)")
        let outcome: Result<Void, any Error>
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await DemoTour(server: server, folder: folder, terminal: terminal).run()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try? FileManager.default.removeItem(at: folder)
        if !downloadsExisted { _ = rmdir(downloads.path) }
        try await server.shutdown()
        if case .failure(let error) = outcome {
            terminal.error(terminal.errorStyle.paint("courier: error: ", .failure) + "the demo failed: \(error)\n")
            throw ExitCode(ExitStatus.failure)
        }
    }
}
