import ArgumentParser

/// Parses `courier demo …` and `courier serve …`: ``CourierCommand`` takes positional arguments,
/// which keep ArgumentParser from ever reaching its subcommands, so they are parsed under this
/// root, named `courier` too, and their help and errors read `courier serve`.
struct SubcommandRoot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        subcommands: [DemoCommand.self, ServeCommand.self]
    )

    /// Whether `name` is one of the subcommands.
    static func isSubcommand(_ name: String?) -> Bool {
        configuration.subcommands.contains { $0._commandName == name }
    }
}
