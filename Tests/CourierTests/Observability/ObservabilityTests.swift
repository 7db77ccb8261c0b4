import Courier
import CourierHAR
import CourierObservability
import CourierTestServer
import CourierTestSupport
import CourierTesting
import Foundation
import Logging
import MetricsTestKit
import Testing

@Suite struct ObservabilityTests {
    /// A policy whose backoff is too short to slow the tests down.
    private static let quick = RetryPolicy(exponentialBackoffScale: 0.01)

    // MARK: - Logging

    @Test(arguments: TransportKind.allCases)
    func oneInfoLinePerRequestWithItsOutcome(transport: TransportKind) async throws {
        let capture = LogCapture()
        let events = MonitorEvents()
        let monitor = LoggingEventMonitor(logger: capture.logger(level: .info), queue: events.queue)
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(eventMonitors: [monitor, events.monitor])
            _ = await session.request(server.url("/bytes/100")).serializingData().response
            _ = await session.request(server.url("/status/404")).validate().serializingData().response
            try await events.waitForFinishes(2)
            let lines = capture.records
            #expect(lines.count == 2, "\(lines.map(\.message))")
            #expect(lines.allSatisfy { $0.level == .info })
            let ok = try #require(lines.first)
            #expect(ok.message.hasPrefix("GET \(server.url("/bytes/100").absoluteString) 200 in "))
            #expect(ok.message.hasSuffix(", 1 attempt, 100 bytes"))
            #expect(ok.metadata[CourierMetadataKey.statusCode] == "200")
            #expect(ok.metadata[CourierMetadataKey.method] == "GET")
            #expect(ok.metadata[CourierMetadataKey.attempts] == "1")
            #expect(ok.metadata[CourierMetadataKey.bytesReceived] == "100")
            #expect(ok.metadata[CourierMetadataKey.responseSource] == "network")
            #expect(ok.metadata[CourierMetadataKey.requestID] != nil)
            #expect(ok.metadata[CourierMetadataKey.errorType] == nil)
            let failed = try #require(lines.last)
            #expect(failed.message.contains(" 404, failed: responseValidationFailed"))
            #expect(failed.metadata[CourierMetadataKey.errorType] == "responseValidationFailed")
            await session.invalidate()
        }
    }

    /// At `.debug` every attempt, retry decision and redirect hop has a line, all under the
    /// request's id, and the attempts are numbered.
    @Test(arguments: TransportKind.allCases)
    func debugLinesShowEachAttemptRetryAndRedirect(transport: TransportKind) async throws {
        let capture = LogCapture()
        let events = MonitorEvents()
        let monitor = LoggingEventMonitor(logger: capture.logger(level: .debug), queue: events.queue)
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick, eventMonitors: [monitor, events.monitor])
            let retried = session.request(server.url("/fault/flaky/log?times=1&status=503")).validate()
            #expect(await retried.serializingData().response.error == nil)
            try await events.waitForFinishes(1)
            let retriedLines = capture.records
            #expect(Set(retriedLines.compactMap { $0.metadata[CourierMetadataKey.requestID]?.description }).count == 1)
            let attempts = retriedLines.filter { $0.metadata[CourierMetadataKey.duration] != nil && $0.level == .debug }
            #expect(attempts.map { $0.metadata[CourierMetadataKey.attempt] } == ["1", "2"])
            #expect(attempts.map { $0.metadata[CourierMetadataKey.statusCode] } == ["503", "200"])
            // The attempt itself got an answer; its status is the error, as OpenTelemetry names it.
            #expect(attempts.map { $0.metadata[CourierMetadataKey.errorType] } == ["503", nil])
            #expect(retriedLines.contains { $0.message.contains(" will retry in ") && $0.level == .debug })
            #expect(retriedLines.contains { $0.message.hasSuffix(" retrying: attempt 2") })
            #expect(retriedLines.last?.level == .info)
            #expect(retriedLines.last?.metadata[CourierMetadataKey.attempts] == "2")

            capture.removeAll()
            _ = await session.request(server.url("/redirect/1")).serializingData().response
            try await events.waitForFinishes(2)
            let hop = try #require(capture.records.first { $0.message.contains(" redirected (302) to GET ") })
            #expect(hop.metadata[CourierMetadataKey.redirectLocation] == "\(server.url("/get").absoluteString)")
            await session.invalidate()
        }
    }

    /// Whatever the level, no line holds a credential: not the `Authorization` header, a cookie,
    /// the URL's password, or a query item that carries a token.
    @Test(arguments: TransportKind.allCases)
    func noCredentialInAnyLineAtAnyLevel(transport: TransportKind) async throws {
        let capture = LogCapture()
        let events = MonitorEvents()
        let monitor = LoggingEventMonitor(logger: capture.logger(level: .trace), queue: events.queue)
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick, eventMonitors: [monitor, events.monitor])
            var components = try #require(
                URLComponents(url: server.url("/fault/flaky/secret"), resolvingAgainstBaseURL: false)
            )
            components.queryItems = [
                URLQueryItem(name: "times", value: "1"), URLQueryItem(name: "status", value: "503"),
                URLQueryItem(name: "access_token", value: "token-s3cr3t"),
            ]
            let url = try #require(components.url)
            let headers: HTTPHeaders = [
                .authorization(bearerToken: "bearer-s3cr3t"), HTTPHeader(name: "Cookie", value: "id=cookie-s3cr3t"),
            ]
            #expect(await session.request(url, headers: headers).validate().serializingData().response.error == nil)
            try await events.waitForFinishes(1)
            let lines = capture.records
            #expect(lines.count >= 5, "trace, debug and info lines: \(lines.map(\.message))")
            for line in lines {
                let text = line.message + " " + line.metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                #expect(!text.contains("s3cr3t"), "\(text)")
            }
            #expect(lines.contains { $0.message.contains("access_token=REDACTED") })
            await session.invalidate()
        }
    }

    /// `.trace` lines per body piece come only when asked for, for data and download requests,
    /// and their sizes add up to the body.
    @Test(arguments: TransportKind.allCases)
    func bodyPiecesAreLoggedOnlyWhenAsked(transport: TransportKind) async throws {
        let asked = LogCapture()
        let quiet = LogCapture()
        let events = MonitorEvents()
        let monitors: [any EventMonitor] = [
            LoggingEventMonitor(logger: asked.logger(level: .trace), logsBodyPieces: true, queue: events.queue),
            LoggingEventMonitor(logger: quiet.logger(level: .trace), queue: events.queue),
            events.monitor,
        ]
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(eventMonitors: monitors)
            let size = 200_000
            #expect(await session.request(server.url("/bytes/\(size)")).serializingData().response.error == nil)
            let download = await session.download(server.url("/bytes/\(size)")).serializingDownloadedFileURL().response
            #expect(download.error == nil)
            if let file = download.fileURL { try? FileManager.default.removeItem(at: file) }
            try await events.waitForFinishes(2)
            let pieces = asked.records.filter { $0.metadata[CourierMetadataKey.bodyPieceSize] != nil }
            let total = pieces.compactMap { Int("\($0.metadata[CourierMetadataKey.bodyPieceSize] ?? "")") }.reduce(0, +)
            #expect(total == 2 * size)
            #expect(pieces.allSatisfy { $0.level == .trace && $0.message.hasSuffix(" body bytes") })
            #expect(!quiet.records.contains { $0.metadata[CourierMetadataKey.bodyPieceSize] != nil })
            await session.invalidate()
        }
    }

    /// URLs with nothing to redact are written as they are; a secret name in any case, or
    /// percent-encoded, is still found.
    @Test func urlsWithNothingSecretAreWrittenAsTheyAre() throws {
        let redaction = URLRedaction()
        let cases: [(String, String)] = [
            ("https://example.com/a/b?page=2&q=swift", "https://example.com/a/b?page=2&q=swift"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/"),
            ("https://example.com/a?tokenized=1&flag", "https://example.com/a?tokenized=1&flag"),
            ("https://example.com/a?ToKeN=x&page=2", "https://example.com/a?ToKeN=REDACTED&page=2"),
            ("https://example.com/a?page=2&%74oken=x", "https://example.com/a?page=2&%74oken=REDACTED"),
            ("https://example.com/a?api_key", "https://example.com/a?api_key"),
        ]
        for (written, expected) in cases {
            let url = try #require(URL(string: written))
            #expect(redaction.string(for: url) == expected, "\(written)")
        }
    }

    @Test func urlsLoseCredentialsAndSecretQueryValues() throws {
        let redaction = URLRedaction()
        let url = try #require(
            URL(string: "https://user:pa55@example.com:8443/a/b?Token=t0k&page=2&X-Amz-Signature=abc&flag#frag")
        )
        #expect(
            redaction.string(for: url)
                == "https://example.com:8443/a/b?Token=REDACTED&page=2&X-Amz-Signature=REDACTED&flag"
        )
        let custom = URLRedaction(secretQueryItemNames: ["Page"])
        #expect(
            custom.string(for: url) == "https://example.com:8443/a/b?Token=t0k&page=REDACTED&X-Amz-Signature=abc&flag"
        )
        let encodedName = try #require(URL(string: "https://example.com/?api%5Fkey=1"))
        #expect(redaction.string(for: encodedName) == "https://example.com/?api%5Fkey=REDACTED")
        var added = URLRedaction()
        added.secretQueryItemNames.insert("X-Api-Key")
        let apiKey = try #require(URL(string: "https://example.com/?x-api-key=1&a=2"))
        #expect(added.string(for: apiKey) == "https://example.com/?x-api-key=REDACTED&a=2")
        let session = try #require(URL(string: "https://example.com/cart;jsessionid=abc;v=1/items?q=1"))
        #expect(redaction.string(for: session) == "https://example.com/cart;jsessionid=REDACTED;v=1/items?q=1")
    }

    /// The README's setup compiles and runs.
    @Test func theReadmeSetupWorks() async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(eventMonitors: [
                LoggingEventMonitor(logger: Logger(label: "api")),  // swift-log
                MetricsEventMonitor(),  // swift-metrics: MetricsSystem's factory, or pass one
            ])
            let status = await session.request(server.url("/get")).serializingData().response.response?.statusCode
            #expect(status == 200)
            await session.invalidate()
        }
    }

    /// A retry that does not wait (`RetryResult.retry`, as a token refresh answers) is counted
    /// and logged too.
    @Test(arguments: TransportKind.allCases)
    func retriesWithoutADelayAreCounted(transport: TransportKind) async throws {
        let metrics = TestMetrics()
        let capture = LogCapture()
        let events = MonitorEvents()
        let monitors: [any EventMonitor] = [
            MetricsEventMonitor(factory: metrics, queue: events.queue),
            LoggingEventMonitor(logger: capture.logger(level: .debug), queue: events.queue),
            events.monitor,
        ]
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: RetryOnce(), eventMonitors: monitors)
            let request = session.request(server.url("/fault/flaky/now?times=1&status=500")).validate()
            #expect(await request.serializingData().response.error == nil)
            try await events.waitForFinishes(1)
            #expect(metrics.counterTotal(label: "courier.client.retries") == 1)
            #expect(capture.records.contains { $0.message.hasSuffix(" retrying: attempt 2") })
            #expect(capture.records.last?.metadata[CourierMetadataKey.attempts] == "2")
            await session.invalidate()
        }
    }

    // MARK: - HAR

    /// A session's traffic recorded on either transport has HAR 1.2's required fields, no
    /// credential, and replays offline to the same answers.
    @Test(arguments: TransportKind.allCases)
    func harRecordsAndReplays(transport: TransportKind) async throws {
        let events = MonitorEvents()
        let recorder = HARRecorder(queue: events.queue)
        let live = try await TestServer.withRunningServer { server in
            let session = transport.makeSession(eventMonitors: [recorder, events.monitor])
            let get = await session.request(
                server.url("/get?x=1"),
                headers: [.authorization(bearerToken: "s3cr3t")]
            ).serializingData().response
            let post = await session.request(
                server.url("/post"),
                method: .post,
                parameters: ["a": 1],
                encoder: JSONParameterEncoder.default
            ).serializingData().response
            let redirected = await session.request(server.url("/redirect/1")).serializingData().response
            let bytes = await session.request(server.url("/bytes/64")).serializingData().response
            try await events.waitForFinishes(4)
            await session.invalidate()
            return (
                server.baseURL,
                [get, post, redirected, bytes].map { ($0.request?.url, $0.response?.statusCode, $0.data) }
            )
        }

        let json = try recorder.archive.jsonData()
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["creator"] as? [String: Any])?.keys.sorted() == ["name", "version"])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 5, "four requests, one of them redirected once")
        for entry in entries {
            #expect(
                Set(["startedDateTime", "time", "request", "response", "cache", "timings"]).isSubset(of: entry.keys)
            )
            let request = try #require(entry["request"] as? [String: Any])
            let requestKeys = [
                "method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize",
            ]
            #expect(Set(requestKeys).isSubset(of: request.keys))
            let response = try #require(entry["response"] as? [String: Any])
            let responseKeys = [
                "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize",
                "bodySize",
            ]
            #expect(Set(responseKeys).isSubset(of: response.keys))
            let content = try #require(response["content"] as? [String: Any])
            #expect(content["size"] is Int && content["mimeType"] is String)
            let timings = try #require(entry["timings"] as? [String: Double])
            #expect(["send", "wait", "receive"].allSatisfy { (timings[$0] ?? -1) >= 0 })
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("har-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("run.har")
        try recorder.write(to: file)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["run.har"])
        let archive = try HARArchive(data: Data(contentsOf: file))
        #expect(archive.log.entries[1].request.postData?.text == #"{"a":1}"#)
        #expect(archive.log.entries[2].response.status == 302)
        #expect(archive.log.entries[2].response.redirectURL.hasSuffix("/get"))
        #expect(
            archive.log.entries[0].request.headers.contains { $0.name == "Authorization" && $0.value == "REDACTED" }
        )
        // No header holds the credential (httpbin's body echoes it: bodies are kept as they came).
        let headers = archive.log.entries.flatMap { $0.request.headers + $0.response.headers }
        #expect(!headers.contains { $0.value.contains("s3cr3t") })

        let (baseURL, answers) = live
        let offline = Session(transport: StubTransport(replaying: archive))
        let replayed = [
            await offline.request(baseURL.appendingPathComponent("get").absoluteString + "?x=1").serializingData()
                .response,
            await offline.request(
                baseURL.appendingPathComponent("post"),
                method: .post,
                parameters: ["a": 1],
                encoder: JSONParameterEncoder.default
            ).serializingData().response,
            await offline.request(baseURL.appendingPathComponent("redirect/1")).serializingData().response,
            await offline.request(baseURL.appendingPathComponent("bytes/64")).serializingData().response,
        ]
        for (answer, replay) in zip(answers, replayed) {
            #expect(replay.response?.statusCode == answer.1)
            #expect(replay.data == answer.2)
            #expect(replay.request?.url == answer.0)
        }
        let unmatched = await offline.request(baseURL.appendingPathComponent("never")).serializingData().response
        #expect(unmatched.error?.underlyingError.map { ($0 as? URLError)?.code } == .resourceUnavailable)
        await offline.invalidate()
    }

    /// A recorder keeps its last `maximumEntries` exchanges, so a long run cannot take all memory.
    /// A retried attempt is an entry of its own, before the answer that replaced it.
    @Test(arguments: TransportKind.allCases)
    func harRecordsEachRetriedAttempt(transport: TransportKind) async throws {
        let events = MonitorEvents()
        let recorder = HARRecorder(queue: events.queue)
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: RetryOnce(), eventMonitors: [recorder, events.monitor])
            let url = server.url("/fault/flaky/har-\(transport)?times=1&status=503")
            #expect(await session.request(url).validate().serializingData().response.error == nil)
            try await events.waitForFinishes(1)
            let entries = recorder.archive.log.entries
            #expect(entries.map(\.response.status) == [503, 200])
            #expect(entries.allSatisfy { $0.request.url == url.absoluteString })
            #expect(entries.first?.response.content.text == nil, "a retried attempt's body is not kept")
            #expect(entries.last?.response.content.text?.contains("\"attempts\"") == true)
            await session.invalidate()
        }
    }

    @Test func harRecorderKeepsTheNewestEntriesWithinItsLimit() async throws {
        let events = MonitorEvents()
        let recorder = HARRecorder(maximumEntries: 2, queue: events.queue)
        let stub = StubTransport()
        stub.respond { _ in .status(200, body: Data("ok".utf8)) }
        let session = Session(transport: stub, eventMonitors: [recorder, events.monitor])
        for index in 0..<3 {
            _ = await session.request("https://example.com/\(index)").serializingData().response
        }
        try await events.waitForFinishes(3)
        #expect(recorder.archive.log.entries.map(\.request.url) == ["https://example.com/1", "https://example.com/2"])
        await session.invalidate()
    }

    // MARK: - Metrics

    @Test(arguments: TransportKind.allCases)
    func metricsUseOpenTelemetrysNamesAndBoundedDimensions(transport: TransportKind) async throws {
        let metrics = TestMetrics()
        let events = MonitorEvents()
        let monitor = MetricsEventMonitor(factory: metrics, queue: events.queue)
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Self.quick, eventMonitors: [monitor, events.monitor])
            let retried = session.request(server.url("/fault/flaky/metrics?times=1&status=503")).validate()
            #expect(await retried.serializingData().response.error == nil)
            _ = await session.request(server.url("/redirect/1")).serializingData().response
            _ = await session.request(server.url("/status/404")).validate().serializingData().response
            try await events.waitForFinishes(3)

            let server = [
                ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", "\(server.port)"),
            ]
            // One duration per exchange: two attempts of the retried request, the redirect's two
            // hops, the 404.
            let duration = "http.client.request.duration"
            let failed503 = [("http.response.status_code", "503"), ("error.type", "503")]
            #expect(try metrics.expectTimer(duration, server + failed503).values.count == 1)
            let ok = [("http.response.status_code", "200"), ("error.type", "")]
            #expect(try metrics.expectTimer(duration, server + ok).values.count == 2)
            let redirected = [("http.response.status_code", "302"), ("error.type", "")]
            #expect(try metrics.expectTimer(duration, server + redirected).values.count == 1)
            let failed404 = [("http.response.status_code", "404"), ("error.type", "404")]
            #expect(try metrics.expectTimer(duration, server + failed404).values.count == 1)
            #expect(metrics.timers(label: duration).reduce(0) { $0 + $1.values.count } == 5)
            let retries = try metrics.expectCounter("courier.client.retries", server + [("error.type", "503")])
            #expect(retries.totalValue == 1)
            let redirects = try metrics.expectCounter(
                "courier.client.redirects",
                server + [("http.response.status_code", "302")]
            )
            #expect(redirects.totalValue == 1)
            #expect(try metrics.expectCounter("courier.client.requests", server + [("error.type", "")]).totalValue == 2)
            let failures = try metrics.expectCounter(
                "courier.client.requests",
                server + [("error.type", "responseValidationFailed")]
            )
            #expect(failures.totalValue == 1)
            let network = try metrics.expectCounter(
                "courier.client.responses",
                [("courier.response_source", "network")]
            )
            #expect(network.totalValue == 5)
            #expect(metrics.recorders(label: "http.client.response.body.size").count == 1)
            let active = try metrics.expectMeter("http.client.active_requests", server)
            #expect(active.values == [1, 0, 1, 0, 1, 0], "each request counted up once and down once")
            // Each metric has one set of dimension names (Prometheus refuses a change).
            let labelled =
                metrics.timers.map { ($0.label, $0.dimensions) } + metrics.counters.map { ($0.label, $0.dimensions) }
            let names = labelled.reduce(into: [String: Set<[String]>]()) { $0[$1.0, default: []].insert($1.1.map(\.0)) }
            #expect(names.values.allSatisfy { $0.count == 1 }, "\(names)")
            // No dimension names a URL, path or query.
            let dimensionNames = Set(labelled.flatMap { $0.1.map(\.0) })
            #expect(
                dimensionNames.isSubset(of: [
                    "http.request.method", "server.address", "server.port", "http.response.status_code", "error.type",
                    "courier.response_source",
                ])
            )
            await session.invalidate()
        }
    }
}

/// Retries a failed request once, at once.
private struct RetryOnce: RequestInterceptor {
    func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        request.retryCount == 0 ? .retry : .doNotRetry
    }
}

/// Log records kept in memory.
private final class LogCapture: Sendable {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let stored = TestLock([Record]())

    var records: [Record] { stored.withLock { $0 } }

    func removeAll() { stored.withLock { $0.removeAll() } }

    /// A logger at `level` whose lines land here.
    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "courier.test") { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ record: Record) { stored.withLock { $0.append(record) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.append(
                Record(
                    level: event.level,
                    message: "\(event.message)",
                    metadata: metadata.merging(event.metadata ?? [:]) { $1 }
                )
            )
        }
    }
}

/// Signals each finished request on the queue the monitors under test share, after theirs.
final class MonitorEvents: Sendable {
    let queue = DispatchQueue(label: "ObservabilityTests.monitors")
    private let finished = TestLock((count: 0, waiters: [(Int, CheckedContinuation<Void, Never>)]()))

    var monitor: ClosureEventMonitor {
        let monitor = ClosureEventMonitor(queue: queue)
        monitor.requestDidFinish = { [self] _ in
            let ready = finished.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.count += 1
                let count = state.count
                let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
                state.waiters.removeAll { $0.0 <= count }
                return ready
            }
            ready.forEach { $0.resume() }
        }
        return monitor
    }

    /// Waits until `count` requests have finished, all monitors told.
    func waitForFinishes(_ count: Int) async throws {
        let done = await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                let now = self.finished.withLock { state -> Bool in
                    if state.count >= count { return true }
                    state.waiters.append((count, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
            return true
        }
        try #require(done == true, "\(count) requests never finished")
    }
}
