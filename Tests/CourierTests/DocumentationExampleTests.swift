import Courier
import CourierHAR
import CourierNIO
import CourierObservability
import CourierTestServer
import CourierTestSupport
import CourierTesting
import Foundation
import Logging
import Testing
import Tracing

/// The code in the DocC articles (`Sources/*/*.docc`), run against the embedded server on both
/// transports. Every line of every `swift` block in an article must appear in this file (checked
/// below), so an article cannot show code that does not compile or no longer works. The articles
/// name the server's address `base`, a session `session` and their example types as here.
@Suite struct DocumentationExampleTests {
    struct Echo: Decodable, Sendable {
        let url: String
    }

    struct Greeting: Decodable, Sendable, Equatable {
        let greetingText: String
    }

    struct Line: Decodable, Sendable {
        let id: Int
    }

    @Test(arguments: TransportKind.allCases)
    func gettingStarted(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let session = transport.makeSession()
            let echo = try await session.request("\(base)/get", parameters: ["q": "swift"])
                .validate()
                .serializingDecodable(Echo.self).value
            #expect(echo.url.hasSuffix("/get?q=swift"))

            let code = await withCheckedContinuation { continuation in
                session.request("\(base)/status/503")
                    .validate(statusCode: 200..<300)
                    .responseDecodable(of: Echo.self) { response in
                        print(response.error?.responseCode as Any)
                        continuation.resume(returning: response.error?.responseCode)
                    }
            }
            #expect(code == 503)

            let result = await session.request("\(base)/status/404").validate().serializingData().result
            if case .failure(let error) = result {
                print(error.kind, error.responseCode as Any)
            }
            #expect((try? result.get()) == nil)

            // The landing page.
            let user = try await session.request("\(base)/get", parameters: ["name": "ada"])
                .validate()
                .serializingDecodable(Echo.self).value
            #expect(user.url.hasSuffix("name=ada"))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func usage(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let session = transport.makeSession()
            struct Login: Encodable, Sendable {
                let name: String
                let admin: Bool
            }
            let form = try await session.request(
                "\(base)/post",
                method: .post,
                parameters: Login(name: "Ada", admin: true)
            )
            .serializingData().value
            let json = try await session.request(
                "\(base)/post",
                method: .post,
                parameters: Login(name: "Ada", admin: true),
                encoder: .json
            ).serializingData().value
            let dictionary = try await session.request(
                "\(base)/post",
                method: .post,
                parameters: ["name": "Ada", "age": 36],
                encoding: JSONEncoding.default
            ).serializingData().value
            #expect(String(decoding: form, as: UTF8.self).contains(#""admin": "1""#))
            #expect(String(decoding: json, as: UTF8.self).contains(#""admin": true"#))
            #expect(String(decoding: dictionary, as: UTF8.self).contains(#""age": 36"#))

            let checked = await session.request("\(base)/status/503")
                .validate(statusCode: 200..<300)
                .validate(contentType: ["application/json"])
                .serializingData().result
            #expect((try? checked.get()) == nil)

            let guardedURL = server.url(
                "/base64/" + Data(")]}',\n{\"greeting_text\":\"hi\"}".utf8).base64EncodedString()
            )
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let guarded = try await session.request(guardedURL)
                .serializingDecodable(Greeting.self, dataPreprocessor: .googleXSSI, decoder: decoder).value
            let text = try await session.request(guardedURL).serializingResponse(using: .string).value
            #expect(guarded == Greeting(greetingText: "hi"))
            #expect(text.hasPrefix(")]}'"))

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = DownloadRequest.suggestedDownloadDestination(
                in: folder,
                options: [.createIntermediateDirectories, .removePreviousFile]
            )
            let file = try await session.download("\(base)/range/1000", to: destination)
                .validate()
                .serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: file).count == 1000)

            let sent = try await session.upload(Data("hello".utf8), to: "\(base)/post").serializingData().value
            let multipart = try await session.upload(
                multipartFormData: { form in form.append(Data("Ada".utf8), withName: "name") },
                to: "\(base)/post"
            ).serializingData().value
            #expect(String(decoding: sent, as: UTF8.self).contains("hello"))
            #expect(String(decoding: multipart, as: UTF8.self).contains("Ada"))

            var lines = 0
            for try await _ in session.streamRequest("\(base)/stream/5").validate().streamingDecodable(Line.self) {
                lines += 1
            }
            #expect(lines == 5)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func advancedUsage(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let session = transport.makeSession()
            let configured = Session(
                configuration: .init {
                    $0.requestDeadline = 10
                    $0.redirectLimit = 5
                }
            )
            #expect(configured.configuration.redirectLimit == 5)
            await configured.invalidate()

            _ = transport  // The article's session runs on the default transport.
            let retrying = Session(interceptor: RetryPolicy())
            let flaky = try await retrying.request("\(base)/fault/flaky/docs?times=1&status=503")
                .validate()
                .serializingData().value
            #expect(!flaky.isEmpty)
            await retrying.invalidate()

            let hooked = try await session.request("\(base)/get")
                .onURLRequestCreation { request in print(request.url as Any) }
                .cURLDescription { command in print(command) }
                .onHTTPResponse { response, completion in completion(response.statusCode == 200 ? .allow : .cancel) }
                .serializingData().value
            #expect(!hooked.isEmpty)
            await session.invalidate()
        }
    }

    @Test func transportsAndTesting() async throws {
        let session = Session()
        #expect(session.transport is AsyncHTTPClientTransport)
        await session.invalidate()
        let overURLSession = Session(transport: .urlSession)
        #expect(overURLSession.transport is URLSessionTransport)
        await overURLSession.invalidate()

        try await TestServer.withRunningServer { server in
            let echo = try await Session().request(server.url("/get")).serializingDecodable(Echo.self).value
            print(echo.url)
            #expect(echo.url.hasSuffix("/get"))
        }
    }

    @Test func logsMetricsAndHAR() async throws {
        try await TestServer.withRunningServer { server in
            let session = Session(eventMonitors: [
                LoggingEventMonitor(logger: Logger(label: "api")),
                MetricsEventMonitor(),
            ])
            #expect(await session.request(server.url("/get")).serializingData().response.error == nil)
            await session.invalidate()

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doc-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("users.har")
            let events = MonitorEvents()
            let recorder = HARRecorder(queue: events.queue)
            let live = Session(eventMonitors: [recorder, events.monitor])
            // … run the requests …
            let recorded = await live.request(server.url("/json")).serializingData().response.data
            // The recorder hears of the end on its queue, after the caller resumed.
            try await events.waitForFinishes(1)
            await live.invalidate()
            #expect(recorder.archive.log.entries.count == 1)
            try recorder.write(to: url)
            let offline = Session(transport: StubTransport(replaying: try HARArchive(data: Data(contentsOf: url))))
            #expect(await offline.request(server.url("/json")).serializingData().response.data == recorded)
            await offline.invalidate()
        }
    }

    /// The tracing setup, as the observability article shows it (with the tracer bootstrapped in
    /// this process, the no-op one: `TracingTests` checks the spans with a tracer of its own).
    @Test func tracingSetup() async throws {
        try await TestServer.withRunningServer { server in
            let base = server.baseURL.absoluteString
            let tracer = InstrumentationSystem.tracer
            let session = Session(eventMonitors: [TracingEventMonitor(tracer: tracer)])
            try await tracer.withSpan("checkout") { _ in
                _ = try await session.request("\(base)/get").serializingData().value
            }
            await session.invalidate()
        }
    }

    /// The HAR article's setup, as it shows it (the test above waits for the recorder).
    @Test func harSetup() async {
        let recorder = HARRecorder()
        let live = Session(eventMonitors: [recorder])
        await live.invalidate()
        #expect(recorder.archive.log.entries.isEmpty)
    }

    // MARK: - Every article's code is here

    @Test func everyArticleLineIsInThisFile() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let ownLines = Set(try String(contentsOf: testFile, encoding: .utf8).split(separator: "\n").map(Self.trimmed))
        let sources = root.appendingPathComponent("Sources")
        var checked = 0
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let catalog = sources.appendingPathComponent(target).appendingPathComponent("\(target).docc")
            guard let articles = try? FileManager.default.contentsOfDirectory(atPath: catalog.path) else { continue }
            for article in articles where article.hasSuffix(".md") {
                let text = try String(contentsOf: catalog.appendingPathComponent(article), encoding: .utf8)
                for line in Self.swiftBlockLines(in: text) {
                    checked += 1
                    let found = ownLines.contains(line)
                    #expect(found, "not in DocumentationExampleTests.swift: \(target).docc/\(article): \(line)")
                }
            }
        }
        #expect(checked > 50, "the articles' code was found")
    }

    private static func trimmed(_ line: Substring) -> String {
        line.trimmingCharacters(in: .whitespaces)
    }

    /// The non-empty lines inside the article's ```swift blocks, trimmed.
    private static func swiftBlockLines(in text: String) -> [String] {
        var lines: [String] = []
        var inSwift = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = trimmed(raw)
            if line.hasPrefix("```") {
                inSwift = !inSwift && line == "```swift"
                continue
            }
            if inSwift, !line.isEmpty { lines.append(line) }
        }
        return lines
    }
}
