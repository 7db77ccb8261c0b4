import AsyncHTTPClient
import CoreMetrics
import Courier
import CourierNIO
import CourierObservability
import Foundation
import Logging
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One workload run by one client, in a child process of its own so its peak memory is its own.
struct ClientRun {
    let client: Client
    let workload: Workload
    let server: URL
    /// Which paths the server serves each workload's bodies at.
    let layout: ServerLayout
    /// The body size of a transfer workload.
    let size: Int64
    /// How many requests a request workload sends.
    let requests: Int
    /// How many of them are in flight at once.
    let concurrency: Int
    /// A folder of this run's files, removed afterwards.
    let folder: URL

    /// What a client needs, made before the clock starts: Courier's session, or a raw URLSession
    /// (raw AsyncHTTPClient uses `HTTPClient.shared`, as its users do).
    struct Connections {
        let session: Session?
        let urlSession: URLSession?
    }

    /// Runs the workload once and measures it.
    func measure() async throws -> Measurement {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("source.bin")
        if workload == .upload || workload == .multipart { try Self.writeFile(at: source, size: size) }
        let connections = makeConnections()
        let cpuBefore = ProcessUsage.cpuSeconds()
        let switchesBefore = ProcessUsage.contextSwitches()
        let start = ContinuousClock.now
        let bytes: Int64
        switch workload {
        case .sequential, .concurrent:
            bytes = try await sendRequests(
                to: layout.smallBody(on: server),
                decoding: false,
                connections
            )
        case .decode:
            bytes = try await sendRequests(
                to: layout.records(on: server),
                decoding: true,
                connections
            )
        case .download: bytes = try await download(to: folder.appendingPathComponent("downloaded.bin"), connections)
        case .upload: bytes = try await upload(source, connections)
        case .multipart: bytes = try await uploadMultipart(source, connections)
        case .stream: bytes = try await stream(connections)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpuSeconds = ProcessUsage.cpuSeconds() - cpuBefore
        let contextSwitches = ProcessUsage.contextSwitches() - switchesBefore
        await connections.session?.invalidate()
        connections.urlSession?.finishTasksAndInvalidate()
        return Measurement(
            client: client,
            workload: workload,
            requests: workload.isRequestWorkload ? requests : 1,
            bytes: bytes,
            seconds: seconds,
            cpuSeconds: cpuSeconds,
            contextSwitches: contextSwitches,
            peakResidentBytes: ProcessUsage.peakResidentBytes()
        )
    }

    private func makeConnections() -> Connections {
        switch client {
        case .rawAsyncHTTPClient:
            return Connections(session: nil, urlSession: nil)
        case .rawURLSession:
            // Configured as Courier's transport configures its own: no cache, no cookies.
            return Connections(
                session: nil,
                urlSession: URLSession(configuration: URLSessionTransport.defaultConfiguration())
            )
        case .courierAsyncHTTPClient:
            return Connections(session: Session(transport: AsyncHTTPClientTransport.shared), urlSession: nil)
        case .courierURLSession:
            return Connections(session: Session(transport: URLSessionTransport()), urlSession: nil)
        case .observedCourierAsyncHTTPClient:
            let monitors: [any EventMonitor] = [
                LoggingEventMonitor(logger: Logger(label: "bench") { _ in DiscardingLogHandler() }),
                MetricsEventMonitor(factory: NOOPMetricsHandler.instance),
                TracingEventMonitor(tracer: DroppingTracer()),
            ]
            return Connections(
                session: Session(transport: AsyncHTTPClientTransport.shared, eventMonitors: monitors),
                urlSession: nil
            )
        }
    }

    /// A file of `size` bytes, written in 1 MiB pieces.
    static func writeFile(at url: URL, size: Int64) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var left = size
        while left > 0 {
            let count = Int(min(Int64(piece.count), left))
            try handle.write(contentsOf: piece.prefix(count))
            left -= Int64(count)
        }
    }

    static func size(of file: URL) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// The body of `download` and `stream`, ``size`` bytes.
    var bodyURL: URL { layout.body(of: size, on: server) }

    var uploadURL: URL { layout.upload(on: server) }

    /// Throws unless a transfer moved exactly ``size`` bytes: a server that sends something else
    /// (an error page, a file of another size) must not pass for a fast one.
    func checkTransferred(_ bytes: Int64) throws -> Int64 {
        guard bytes == size else { throw BenchError("\(workload.rawValue) moved \(bytes) bytes, not \(size)") }
        return bytes
    }

    /// What `/upload` answers.
    struct Receipt: Decodable {
        let bytes: Int64
    }

    /// One element of `/records/:n`.
    struct Record: Decodable, Sendable {
        let id: Int
        let name: String
        let email: String
        let score: Double
        let active: Bool
        let tags: [String]
        let bio: String
    }
}

/// Takes every line at `.info` (a production level: one line per request) and drops it: each
/// line is built, as a real handler would have it, and nothing is written, so the benchmark
/// measures the monitor and not a terminal.
struct DiscardingLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        // Reading the message builds it, as writing it would.
        _ = "\(event.message)"
    }
}
