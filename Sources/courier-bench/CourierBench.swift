import ArgumentParser
import CourierTestServer
import Foundation

/// Measures Courier beside raw AsyncHTTPClient and raw URLSession in one run: each workload, with
/// each client in turn, alternating over several rounds after a warm-up, every client run in a
/// child process of its own (so its peak memory is its own), against a server in another process.
@main
struct CourierBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-bench",
        abstract: "Compare Courier with raw AsyncHTTPClient and raw URLSession, side by side.",
        discussion:
            "Build with -c release: swift run -c release courier-bench. Against nginx instead of the embedded server: scripts/bench-nginx."
    )

    @Option(
        name: .long,
        help:
            "A workload to run (repeat for several): sequential, concurrent, decode, download, upload, multipart, stream. Default: all."
    )
    var workload: [Workload] = []

    @Option(
        name: .long,
        help:
            "A client to run (repeat for several): raw-ahc, courier-ahc, raw-urlsession, courier-urlsession, or courier-ahc-observed (with CourierObservability's monitors). Default: the first four."
    )
    var client: [Client] = []

    @Option(
        name: .long,
        help: "Requests per run of a request workload, instead of its default (5,000; 20,000 for concurrent)."
    )
    var requests: Int?

    @Option(
        name: .long,
        help: "Requests in flight at once, instead of the workload's default (64 for concurrent, else 1)."
    )
    var concurrency: Int?

    @Option(name: .long, help: "Measured rounds per workload, after one warm-up round.")
    var rounds = 5

    @Option(
        name: .long,
        help: "Body size in bytes, instead of each workload's default (1 GiB download, 256 MiB uploads)."
    )
    var size: Int64?

    @Option(name: .long, help: "Also write the results as JSON to this file.")
    var json: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run against this server (http://HOST:PORT[/PATH]) instead of the embedded one.",
            discussion:
                "With the files layout it must serve the files --write-files writes and accept PUT under upload/; scripts/bench-nginx sets up nginx that way."
        )
    )
    var server: String?

    @Option(
        name: .customLong("server-layout"),
        help:
            "Where --server keeps each workload's bodies: files (static files, PUT uploads) or test-server (courier-bench --serve's routes)."
    )
    var serverLayout: ServerLayout = .files

    @Option(
        name: .customLong("write-files"),
        help: ArgumentHelp(
            "Write the files a static server needs for a run with the same workload and size options into this folder, and exit.",
            valueName: "folder"
        )
    )
    var writeFiles: String?

    @Flag(
        name: .long,
        help: "A quick check that everything works (1 MiB bodies, 50 requests, one round); its numbers mean nothing."
    )
    var smoke = false

    @Option(name: .customLong("child-client"), help: .hidden)
    var childClient: Client?

    @Option(name: .customLong("child-server"), help: .hidden)
    var childServer: String?

    @Option(name: .customLong("child-layout"), help: .hidden)
    var childLayout: ServerLayout = .testServer

    @Flag(name: .customLong("serve"), help: .hidden)
    var serves = false

    /// Synchronous, blocking the main thread until the work ends: an async `main` parks the main
    /// thread in libdispatch's `sigsuspend`, which valgrind 3.19 cannot emulate (it writes to the
    /// read-only signal mask it is given, and dies), and the children must run under callgrind
    /// (`scripts/instructions-per-request`).
    mutating func run() throws {
        let command = self
        try BlockingRun.wait { try await command.runAsync() }
    }

    private func runAsync() async throws {
        if serves { return try await serve() }
        if let childClient, let childServer, let server = URL(string: childServer), let workload = workload.first {
            return try await runChild(client: childClient, workload: workload, server: server)
        }
        var outsideServer: URL?
        if let server {
            guard let url = URL(string: server), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host != nil
            else {
                throw ValidationError("--server needs an http:// or https:// URL with a host, not \(server)")
            }
            outsideServer = url
        }
        let orchestra = Orchestra(
            workloads: workload.isEmpty ? Workload.allCases : workload,
            clients: client.isEmpty ? Client.defaults : client,
            rounds: smoke ? 1 : max(1, rounds),
            warmUp: !smoke,
            size: smoke ? 1 << 20 : size,
            requests: smoke ? 50 : requests.map { max(1, $0) },
            concurrency: concurrency.map { max(1, $0) },
            jsonPath: json,
            outsideServer: outsideServer,
            outsideLayout: serverLayout
        )
        if let writeFiles {
            let plans = orchestra.plans.flatMap { [$0.measured] + ($0.warmUp.map { [$0] } ?? []) }
            return try await StaticFiles.write(for: plans, into: URL(fileURLWithPath: writeFiles))
        }
        try await orchestra.run()
    }

    /// The server child: serves until the parent closes its standard input (or a day passes).
    private func serve() async throws {
        var configuration = TestServer.Configuration()
        configuration.maximumRequestBodySize = Int.max
        let server = try await TestServer.start(configuration: configuration)
        FileHandle.standardOutput.write(Data((server.baseURL.absoluteString + "\n").utf8))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Standard input closes when the parent ends, whatever way it ends.
                _ = FileHandle.standardInput.readDataToEndOfFile()
            }
            group.addTask { try? await Task.sleep(for: .seconds(86_400)) }
            await group.next()
            group.cancelAll()
        }
        try await server.shutdown()
    }

    /// A client child: one run, its measurement printed as one JSON line.
    private func runChild(client: Client, workload: Workload, server: URL) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID().uuidString)")
        let run = ClientRun(
            client: client,
            workload: workload,
            server: server,
            layout: childLayout,
            size: size ?? workload.defaultSize,
            requests: max(1, requests ?? workload.defaultRequests),
            concurrency: max(1, concurrency ?? workload.defaultConcurrency),
            folder: folder
        )
        let measurement = try await run.measure()
        let line = try JSONEncoder().encode(measurement)
        FileHandle.standardOutput.write(line + Data("\n".utf8))
    }
}

extension Workload: ExpressibleByArgument {}
extension Client: ExpressibleByArgument {}
extension ServerLayout: ExpressibleByArgument {}
