import Foundation

/// The parent process: starts the server child (unless the run uses an outside server), runs
/// every client child in turn, and reports.
struct Orchestra {
    let workloads: [Workload]
    let clients: [Client]
    let rounds: Int
    let warmUp: Bool
    let size: Int64?
    let requests: Int?
    let concurrency: Int?
    let jsonPath: String?
    /// An outside server to run against, instead of the embedded one in a child process.
    let outsideServer: URL?
    /// Where the outside server keeps each workload's bodies (the embedded one's are its routes).
    let outsideLayout: ServerLayout

    /// The longest one client run may take before it is stopped and reported as failed.
    static let runTimeLimit: TimeInterval = 300

    /// Each workload's plan, and the smaller plan of its warm-up round if there is one.
    var plans: [(measured: Plan, warmUp: Plan?)] {
        workloads.map { workload in
            let plan = Plan(
                workload: workload,
                size: size ?? workload.defaultSize,
                requests: requests ?? workload.defaultRequests,
                concurrency: concurrency ?? workload.defaultConcurrency
            )
            // Warms the server and the page cache; a tenth of the work is enough for that.
            return (plan, warmUp ? plan.scaled(by: 0.1) : nil)
        }
    }

    func run() async throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let serverProcess = try outsideServer == nil ? ServerProcess(executable: executable) : nil
        defer { serverProcess?.stop() }
        let server: URL
        let layout: ServerLayout
        if let outsideServer {
            (server, layout) = (outsideServer, outsideLayout)
            Self.say(
                "courier-bench: server \(server.absoluteString) (outside, \(layout.rawValue) layout), "
                    + "\(rounds) rounds per client"
            )
        } else if let serverProcess {
            (server, layout) = (serverProcess.url, .testServer)
            Self.say("courier-bench: server \(server.absoluteString) (a separate process), \(rounds) rounds per client")
        } else {
            throw BenchError("no server")
        }
        var results: [Measurement] = []
        var summaries: [Report.Summary] = []
        let runStart = ContinuousClock.now
        for (plan, warmUpPlan) in plans {
            let workload = plan.workload
            let workloadStart = ContinuousClock.now
            Self.say("\n\(plan.summary)")
            if let warmUpPlan {
                for client in clients {
                    _ = try runChild(executable, client: client, plan: warmUpPlan, server: server, layout: layout)
                }
            }
            var measured: [Measurement] = []
            // A B A B: clients alternate within each round, so drift hits them alike.
            for _ in 0..<rounds {
                for client in clients {
                    measured.append(
                        try runChild(executable, client: client, plan: plan, server: server, layout: layout)
                    )
                }
            }
            let report = Report(workload: workload, measurements: measured)
            Self.say(report.table())
            Self.say("(\(workload.rawValue): \(Self.describe(ContinuousClock.now - workloadStart)))")
            results += measured
            summaries += report.summaries()
        }
        Self.say("\nall workloads: \(Self.describe(ContinuousClock.now - runStart))")
        if let jsonPath {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            let output = Output(
                server: outsideServer == nil ? "embedded" : server.absoluteString,
                date: Date(),
                arguments: Array(CommandLine.arguments.dropFirst()),
                processorCount: ProcessInfo.processInfo.activeProcessorCount,
                summaries: summaries,
                measurements: results
            )
            try encoder.encode(output).write(to: URL(fileURLWithPath: jsonPath))
            Self.say("\nwrote \(jsonPath)")
        }
    }

    private func runChild(
        _ executable: URL,
        client: Client,
        plan: Plan,
        server: URL,
        layout: ServerLayout
    ) throws -> Measurement {
        let workload = plan.workload
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "--child-client", client.rawValue, "--child-server", server.absoluteString,
            "--child-layout", layout.rawValue,
            "--workload", workload.rawValue, "--size", String(plan.size),
            "--requests", String(plan.requests), "--concurrency", String(plan.concurrency),
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let deadline = DispatchTime.now() + Self.runTimeLimit
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        if process.isRunning, finished.wait(timeout: deadline) == .timedOut {
            process.terminate()
            throw BenchError("\(client.rawValue) \(workload.rawValue) took over \(Int(Self.runTimeLimit)) s")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationStatus == 0,
            let line = data.split(separator: UInt8(ascii: "\n")).last,
            let measurement = try? JSONDecoder().decode(Measurement.self, from: Data(line))
        else {
            throw BenchError("\(client.rawValue) \(workload.rawValue) failed (exit \(process.terminationStatus))")
        }
        return measurement
    }

    /// The JSON file: the per-client figures, then every run, for scripts comparing runs.
    struct Output: Encodable {
        /// `embedded`, or the outside server's URL.
        var server: String
        var date: Date
        var arguments: [String]
        var processorCount: Int
        var summaries: [Report.Summary]
        var measurements: [Measurement]
    }

    /// What one workload's runs do.
    struct Plan {
        let workload: Workload
        let size: Int64
        let requests: Int
        let concurrency: Int

        var summary: String {
            workload.isRequestWorkload
                ? "\(workload.rawValue): \(requests) requests, \(concurrency) in flight"
                : "\(workload.rawValue): \(Orchestra.describe(bytes: size))"
        }

        /// The same workload with `fraction` of the requests or bytes (at least one request, 1 MiB).
        func scaled(by fraction: Double) -> Plan {
            Plan(
                workload: workload,
                size: max(1 << 20, Int64(Double(size) * fraction)),
                requests: max(concurrency, Int(Double(requests) * fraction)),
                concurrency: concurrency
            )
        }
    }

    /// Prints `text` at once, even when standard output is a file or a pipe (which buffer).
    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func describe(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        return seconds >= 60 ? "\(seconds / 60) min \(seconds % 60) s" : "\(seconds) s"
    }

    static func describe(bytes: Int64) -> String {
        bytes >= 1 << 30 ? "\(bytes >> 30) GiB" : bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }
}

/// The server in a child process of its own, so the clients measured do not share its CPU time or memory.
final class ServerProcess {
    let url: URL
    private let process: Process
    private let input: Pipe

    init(executable: URL) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = ["--serve"]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The first line is the server's address.
        var line = Data()
        let reader = output.fileHandleForReading
        while !line.contains(UInt8(ascii: "\n")) {
            let piece = reader.readData(ofLength: 1)
            guard !piece.isEmpty else { throw BenchError("the server process ended before it listened") }
            line += piece
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let url = URL(string: text) else { throw BenchError("the server printed \(text)") }
        self.url = url
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
