import ArgumentParser

/// `courier demo`: a one-minute tour of Courier against the embedded test server.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through Courier against the embedded test server, step by step."
    )

    func run() async throws {}
}
