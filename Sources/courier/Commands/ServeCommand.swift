import ArgumentParser
import CourierTestServer
import Dispatch
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `courier serve`: runs the embedded httpbin-compatible test server until Ctrl-C.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the embedded httpbin-compatible test server until Ctrl-C.",
        discussion: "It serves httpbin's routes and Courier's fault routes under /fault/ (see the README)."
    )

    @Option(name: .shortAndLong, help: "The port to listen on (0 picks a free one).")
    var port = 8080

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The longest any route may wait or hang, in seconds.")
    var maximumWait = 300

    @Flag(
        help: """
            Serve HTTPS (HTTP/2 or HTTP/1.1 by ALPN) with the built-in self-signed test certificate; \
            clients must trust it explicitly (curl --cacert, or TestCertificate.certificatePEM).
            """
    )
    var tls = false

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard maximumWait > 0 else { throw ValidationError("--maximum-wait must be positive.") }
    }

    func run() async throws {
        let configuration = TestServer.Configuration {
            $0.host = host
            $0.port = port
            $0.maximumWait = .seconds(Int64(maximumWait))
            $0.tls = tls ? .selfSigned : nil
        }
        let server = try await TestServer.start(configuration: configuration)
        print("CourierTestServer listening on \(server.baseURL.absoluteString) (Ctrl-C stops it)")
        fflush(nil)  // Scripts wait for this line; stdout is block-buffered when piped.
        await Self.waitForTerminationSignal()
        try await server.shutdown()
        print("stopped")
    }

    /// Returns when the process receives SIGINT or SIGTERM.
    private static func waitForTerminationSignal() async {
        let (signals, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            sources.append(source)
        }
        for await _ in signals { break }
        sources.forEach { $0.cancel() }
    }
}
