import Courier
import CourierHAR
import CourierTestServer
import Foundation

/// The steps of `courier demo`, each run live against the embedded server: decoding,
/// validation, retry with backoff, an interrupted and resumed download, a multipart upload, a
/// JSON-lines stream, and the metrics of the retried request.
struct DemoTour {
    /// The embedded server the steps talk to.
    let server: TestServer
    /// A temporary folder for the steps' files, removed by the caller.
    let folder: URL
    /// Where to write.
    let terminal: Terminal

    /// The reply of `/get`, decoded.
    struct Echo: Decodable, Sendable {
        let args: [String: String]
        let url: String
    }

    /// Why a step's result is not what it should be.
    struct StepFailure: Error, CustomStringConvertible {
        let description: String
    }

    var printer: DemoPrinter { DemoPrinter(terminal: terminal) }

    /// The server's base URL, as the snippets show it.
    var base: String { server.baseURL.absoluteString }

    /// Runs every step in order; a step whose result is wrong throws.
    func run() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        terminal.output(
            terminal.outputStyle.paint("Courier \(CourierVersion.current) demo", .emphasis)
                + ": the embedded test server is on \(base)\n"
        )
        let session = Session()
        try await decode(with: session)
        try await validate(with: session)
        let (retried, archive) = try await retry()
        try await download(with: session)
        try await upload(with: session)
        try await stream(with: session)
        showMetrics(of: retried)
        try showArchive(archive)
        await session.invalidate()
        let elapsed = (clock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        terminal.output(
            "\nDone in \(String(format: "%.1f", seconds)) s; "
                + "the server is stopped and the demo's files are removed.\n"
                + "Next: `swift run courier serve` in one terminal, `swift run courier :8080/get q==hi` in another.\n"
        )
    }

    private func decode(with session: Session) async throws {
        printer.heading(1, "A GET decoded into a struct")
        printer.code(
            """
            struct Echo: Decodable { let args: [String: String]; let url: String }
            let echo = try await session.request("\(base)/get", parameters: ["q": "courier"])
                .validate()
                .serializingDecodable(Echo.self).value
            """
        )
        let echo = try await session.request(server.url("/get"), parameters: ["q": "courier"])
            .validate()
            .serializingDecodable(Echo.self).value
        printer.result("Echo(args: \(echo.args), url: \"\(echo.url)\")")
        guard echo.args == ["q": "courier"] else { throw StepFailure(description: "unexpected args \(echo.args)") }
    }

    private func validate(with session: Session) async throws {
        printer.heading(2, "A validation failure, with its readable error")
        printer.code(
            """
            let result = await session.request("\(base)/status/418").validate().serializingData().result
            """
        )
        let result = await session.request(server.url("/status/418")).validate().serializingData().result
        guard case .failure(let error) = result else { throw StepFailure(description: "/status/418 passed validation") }
        printer.result(
            "error.kind: .\(error.kind), error.responseCode: \(error.responseCode.map(String.init) ?? "nil")"
        )
        printer.result("\"\(error.localizedDescription)\"")
    }

    private func retry() async throws -> (Request, HARArchive) {
        printer.heading(3, "A retry with backoff after two 503s")
        printer.code(
            """
            let retrying = Session(interceptor: RetryPolicy())   // 2 retries, exponential backoff, Retry-After
            let data = try await retrying.request("\(base)/fault/flaky/demo?times=2&status=503")
                .validate()                                       // a 503 fails validation, so it is retried
                .serializingData().value
            """
        )
        let recorder = AttemptRecorder(printer: printer)
        // Shares the attempt recorder's queue, so waiting for one waits for both.
        let har = HARRecorder(queue: recorder.queue)
        let retrying = Session(interceptor: RetryPolicy(), eventMonitors: [recorder, har])
        let request = retrying.request(server.url("/fault/flaky/demo?times=2&status=503")).validate()
        let data = try await request.serializingData().value
        // The monitor's lines come on its own queue: the request has finished, so they are all queued.
        await withCheckedContinuation { continuation in
            recorder.queue.async { continuation.resume() }
        }
        printer.result("succeeded with \(data.count) bytes; request.retryCount == \(request.retryCount)")
        await retrying.invalidate()
        guard request.retryCount == 2 else { throw StepFailure(description: "\(request.retryCount) retries, not 2") }
        return (request, har.archive)
    }

    private func showArchive(_ archive: HARArchive) throws {
        printer.heading(8, "The same attempts recorded as HAR 1.2 (`courier --har FILE URL` records a run)")
        printer.code(
            """
            let recorder = HARRecorder()                          // credentials written as REDACTED
            let retrying = Session(interceptor: RetryPolicy(), eventMonitors: [recorder])
            try recorder.write(to: URL(fileURLWithPath: "run.har")) // replay: StubTransport(replaying:)
            """
        )
        // An entry per exchange: the two attempts retried, then the answer.
        let entries = archive.log.entries
        guard entries.count == 3, let last = entries.last else {
            throw StepFailure(description: "\(entries.count) HAR entries, not 3")
        }
        let statuses = entries.map { String($0.response.status) }.joined(separator: ", ")
        printer.result(
            "\(entries.count) entries (\(statuses)); the last: \(last.request.method) \(last.request.url) → "
                + "\(last.response.status), \(last.response.content.size) bytes, \(String(format: "%.1f", last.time)) ms"
        )
    }

    private func showMetrics(of request: Request) {
        printer.heading(7, "The metrics of every attempt")
        printer.code(
            """
            for metrics in request.allMetrics { print(metrics.statusCode, metrics.timeToFirstByte, metrics.duration) }
            """
        )
        for line in TimingsTable.render(request.allMetrics).split(separator: "\n") {
            printer.note(String(line))
        }
    }
}
