import ArgumentParser
import Courier

/// The `courier` command-line tool. Today it runs the embedded test server; the httpie-style
/// client and `courier demo` arrive with their issue.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Courier's command-line tool.",
        version: CourierVersion.current,
        subcommands: [ServeCommand.self]
    )
}
