import Foundation

/// The parent process: starts the server child, runs every client child in turn, and reports.
struct Orchestra {
    let workloads: [Workload]
    let clients: [Client]
    let rounds: Int
    let warmUp: Bool
    let size: Int64?
    let requests: Int?
    let concurrency: Int?
    let jsonPath: String?

    /// The longest one client run may take before it is stopped and reported as failed.
    static let runTimeLimit: TimeInterval = 300

    func run() async throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let server = try ServerProcess(executable: executable)
        defer { server.stop() }
        Self.say("courier-bench: server \(server.url.absoluteString) (a separate process), \(rounds) rounds per client")
        var results: [Measurement] = []
        var summaries: [Report.Summary] = []
        let runStart = ContinuousClock.now
        for workload in workloads {
            let workloadStart = ContinuousClock.now
            let plan = Plan(
                workload: workload,
                size: size ?? workload.defaultSize,
                requests: requests ?? workload.defaultRequests,
                concurrency: concurrency ?? workload.defaultConcurrency
            )
            Self.say("\n\(plan.summary)")
            if warmUp {
                // Warms the server and the page cache; a tenth of the work is enough for that.
                let warmUpPlan = plan.scaled(by: 0.1)
                for client in clients {
                    _ = try runChild(executable, client: client, plan: warmUpPlan, server: server.url)
                }
            }
            var measured: [Measurement] = []
            // A B A B: clients alternate within each round, so drift hits them alike.
            for _ in 0..<rounds {
                for client in clients {
                    measured.append(try runChild(executable, client: client, plan: plan, server: server.url))
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

    private func runChild(_ executable: URL, client: Client, plan: Plan, server: URL) throws -> Measurement {
        let workload = plan.workload
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "--child-client", client.rawValue, "--child-server", server.absoluteString,
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
