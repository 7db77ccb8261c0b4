import ArgumentParser
import Courier
import Foundation

/// `courier [METHOD] URL [ITEM...]`: an httpie-style HTTP client built only on Courier's public
/// API, plus `courier demo` and `courier serve`.
///
/// `-h` means `--headers`, as in httpie; help is `--help`.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "An HTTP client for the terminal, built on Courier.",
        usage: """
            courier [METHOD] URL [ITEM...] [OPTIONS]
              courier demo
              courier serve [--port N]
            """,
        discussion: """
            METHOD defaults to GET, or POST when there is a body. URL may omit http://; \
            :8080/get means http://localhost:8080/get.

            Items:
              Header:value     a request header (Header: sends an empty one)
              name==value      a query parameter
              name=value       a JSON string field (a form field with --form)
              name:=json       a raw JSON field: count:=3 tags:='["a"]'
              name@path        a file field (the body becomes multipart/form-data)
              @path            the file is the whole body

            Output: on a terminal, the response head and a formatted, coloured body (NO_COLOR turns \
            colours off); redirected, the raw body only, byte for byte, unless --print says otherwise.

            Exit codes: 0 success; 1 the request failed; 2 bad arguments; with --check-status, \
            3/4/5 for a 3xx/4xx/5xx response.
            """,
        version: CourierVersion.current,
        helpNames: [.long]
    )

    @Argument(help: ArgumentHelp("[METHOD] URL [ITEM...]", valueName: "arguments"))
    var arguments: [String] = []

    @Flag(name: .shortAndLong, help: "Send the fields form-encoded (application/x-www-form-urlencoded).")
    var form = false

    @Flag(name: .shortAndLong, help: "Send the fields as a JSON object (the default when there are fields).")
    var json = false

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Authentication as user:password (Basic unless --auth-type says otherwise).",
            valueName: "user:password"
        )
    )
    var auth: String?

    @Option(
        name: [.customLong("auth-type"), .customShort("A")],
        help: "How --auth answers: basic (sent with the request) or digest (answers the server's challenge)."
    )
    var authType: RequestPlan.AuthType = .basic

    @Option(help: ArgumentHelp("Send Authorization: Bearer TOKEN.", valueName: "token"))
    var bearer: String?

    @Flag(name: .shortAndLong, help: "Print the request and response heads and bodies (--print HBhb).")
    var verbose = false

    @Option(
        name: [.customLong("print"), .customShort("p")],
        help: ArgumentHelp(
            "What to print: H request headers, B request body, h response headers, b response body.",
            valueName: "HBhb"
        )
    )
    var printLetters: String?

    @Flag(name: [.customLong("headers"), .customShort("h")], help: "Print only the response headers (--print h).")
    var headersOnly = false

    @Flag(name: [.customLong("body"), .customShort("b")], help: "Print only the response body (--print b).")
    var bodyOnly = false

    @Flag(help: "Exit with 3, 4 or 5 for a 3xx, 4xx or 5xx response, saying why on stderr.")
    var checkStatus = false

    @Flag(
        name: [.customLong("follow"), .customShort("F")],
        help: "Follow redirects."
    )
    var follow = false

    @Option(help: "The most redirects --follow follows.")
    var maxRedirects = 30

    @Option(help: "Seconds an attempt may go without a byte moving before it fails.")
    var timeout: Double?

    @Option(
        name: .customLong("max-time"),
        help: ArgumentHelp(
            "Seconds the whole exchange may take, retries and their waits included, before it fails.",
            valueName: "seconds"
        )
    )
    var maxTime: Double?

    @Option(
        help: ArgumentHelp(
            "Seconds a connection may take to establish (nio). URLSession has no such bound: on "
                + "--transport urlsession this lowers --timeout to it, for the whole attempt.",
            valueName: "seconds"
        )
    )
    var connectTimeout: Double?

    @Option(
        help: """
            Retry up to N times with Courier's RetryPolicy (backoff with jitter, Retry-After). \
            A POST or PATCH is retried only with an Idempotency-Key header.
            """
    )
    var retry = 0

    @Flag(help: "Print each attempt's timings and sizes on stderr.")
    var timings = false

    @Flag(name: .shortAndLong, help: "Save the body to a file, with a progress bar on a terminal.")
    var download = false

    @Option(name: .shortAndLong, help: ArgumentHelp("The file --download saves to.", valueName: "file"))
    var output: String?

    @Flag(
        name: [.customLong("continue"), .customShort("c")],
        help: "Resume a partial --output file where it ends (needs --download and --output)."
    )
    var resume = false

    @Option(help: "The transport: nio (AsyncHTTPClient, the default) or urlsession.")
    var transport: TransportChoice = .nio

    @Flag(help: "Print the request that would be sent, without sending it.")
    var offline = false

    @Option(
        help: ArgumentHelp(
            "Record every exchange (attempts, redirects) to FILE as HAR 1.2, credentials redacted.",
            valueName: "file"
        )
    )
    var har: String?

    @Option(
        help: ArgumentHelp(
            "Trust only the CA certificates in FILE (PEM or DER), as curl's --cacert.",
            valueName: "file"
        )
    )
    var cacert: String?

    @Option(
        help: ArgumentHelp("Show the client certificate in FILE (PEM or DER) to servers that ask.", valueName: "file")
    )
    var cert: String?

    @Option(help: ArgumentHelp("The private key of --cert, if not in its file.", valueName: "file"))
    var key: String?

    @Option(
        help: ArgumentHelp(
            "Trust the server only if its key, or a key of its chain, has one of these pins (sha256//BASE64;...).",
            valueName: "pins"
        )
    )
    var pinnedpubkey: String?

    @Flag(
        name: [.customLong("insecure"), .customShort("k")],
        help:
            "Do not check the server's certificate (development only: anyone on the path can read and change the exchange)."
    )
    var insecure = false

    mutating func validate() throws {
        guard !arguments.isEmpty else { throw ValidationError("a URL is required") }
        guard !(form && json) else { throw ValidationError("--form and --json cannot be combined") }
        guard retry >= 0 else { throw ValidationError("--retry must be 0 or more") }
        guard maxRedirects >= 0 else { throw ValidationError("--max-redirects must be 0 or more") }
        for (name, value) in [("--timeout", timeout), ("--max-time", maxTime), ("--connect-timeout", connectTimeout)] {
            // Bounded, so every clock the value reaches can hold it.
            if let value, !(value > 0 && value <= 1_000_000_000) {
                throw ValidationError("\(name) must be a positive number of seconds, at most 1000000000")
            }
        }
        if resume, !(download && output != nil) {
            throw ValidationError("--continue needs --download and --output FILE")
        }
        if output != nil, !download { throw ValidationError("--output needs --download") }
        if key != nil, cert == nil { throw ValidationError("--key needs --cert") }
        _ = try makeOptions(
            terminal: Terminal(
                stdoutIsTerminal: false,
                stderrIsTerminal: false,
                outputStyle: .plain,
                errorStyle: .plain
            )
        )
    }

    /// The plain-value options for ``Exchange``, checked; a problem is a usage error.
    func makeOptions(terminal: Terminal) throws -> ClientOptions {
        var options: ClientOptions
        do {
            let plan = try RequestPlan.make(
                arguments: arguments,
                format: form ? .form : .json,
                basicCredentials: auth,
                authType: authType,
                bearerToken: bearer
            )
            var selection = try PrintSelection.resolve(
                PrintSelection.Flags(
                    print: printLetters,
                    verbose: verbose,
                    headers: headersOnly,
                    body: bodyOnly,
                    offline: offline
                ),
                stdoutIsTerminal: terminal.stdoutIsTerminal
            )
            if download {
                // The body goes to the file; heads are printed only when asked for.
                let asked = printLetters != nil || verbose || headersOnly
                selection = asked ? selection.subtracting(.responseBody) : []
            }
            options = ClientOptions(
                plan: plan,
                selection: selection,
                transport: transport,
                followsRedirects: follow,
                maximumRedirects: maxRedirects,
                timeout: timeout,
                maximumTime: maxTime,
                connectTimeout: connectTimeout,
                retries: retry,
                showsTimings: timings,
                downloads: download,
                outputPath: output,
                resumes: resume,
                checksStatus: checkStatus,
                isOffline: offline,
                harPath: har
            )
        } catch {
            throw ValidationError(error.description)
        }
        options.trust = try makeTrustOptions(host: options.plan.url.host ?? "")
        return options
    }

    /// `--cacert`, `--cert`, `--key`, `--pinnedpubkey` and `--insecure`, read and checked.
    private func makeTrustOptions(host: String) throws(ValidationError) -> TrustOptions {
        do {
            return try TrustOptions.make(
                host: host,
                caCertificateFile: cacert,
                certificateFile: cert,
                keyFile: key,
                pins: pinnedpubkey,
                insecure: insecure
            )
        } catch let error as CourierError {
            throw ValidationError(error.localizedDescription)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        let terminal = Terminal.current()
        let code = await Exchange(options: try makeOptions(terminal: terminal), terminal: terminal).run()
        if code != ExitStatus.success { throw ExitCode(code) }
    }

    /// Parses and runs, with httpie's exit codes: 2 (not ArgumentParser's 64) for bad arguments,
    /// with the usage on stderr.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let isSubcommand = SubcommandRoot.isSubcommand(arguments.first)
        do {
            if isSubcommand {
                switch try SubcommandRoot.parseAsRoot(arguments) {
                case let demo as DemoCommand: try await demo.run()
                case let serve as ServeCommand: try await serve.run()
                case var other: try other.run()
                }
            } else {
                try await parse(arguments).run()
            }
            terminate(ExitStatus.success)
        } catch {
            terminate(
                isSubcommand ? exitCode(for: error, root: SubcommandRoot.self) : exitCode(for: error, root: Self.self)
            )
        }
    }

    /// Prints what `error` calls for, as `root`'s parser words it, and returns the exit code.
    private static func exitCode<Root: ParsableCommand>(for error: any Error, root: Root.Type) -> Int32 {
        if let exitCode = error as? ExitCode { return exitCode.rawValue }
        let code = root.exitCode(for: error)
        if code == .success {
            Terminal.current().output(root.fullMessage(for: error) + "\n")  // --help, --version
            return ExitStatus.success
        }
        Terminal.current().error(root.fullMessage(for: error) + "\n")
        return code == .validationFailure ? ExitStatus.usage : code.rawValue
    }
}

/// Ends the process with `code` (a free function: inside a command, `exit` names ArgumentParser's).
private func terminate(_ code: Int32) -> Never {
    exit(code)
}

extension RequestPlan.AuthType: ExpressibleByArgument {}
