import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failing response serializer is offered to the retriers, as in Alamofire: each failing
/// serializer gets its decision; a retry runs the request again; a refusal with an error stays
/// with that handler.
@Suite struct SerializerRetryTests {
    struct Refused: Error {}

    /// Fails unless the status is 200: a serializer that a 500 body cannot satisfy.
    struct OnlyOK: ResponseSerializer {
        func serialize(
            request: URLRequest?,
            response: HTTPURLResponse?,
            data: Data?,
            error: CourierError?
        ) throws
            -> Int
        {
            if let error { throw error }
            guard response?.statusCode == 200 else { throw Refused() }
            return data?.count ?? 0
        }
    }

    /// Declines every retry and counts the questions.
    final class CountingRetrier: RequestRetrier {
        let asked = TestLock<[CourierError]>([])
        let answer: @Sendable () -> RetryResult

        init(answer: @escaping @Sendable () -> RetryResult = { .doNotRetry }) {
            self.answer = answer
        }

        func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
            asked.withLock { $0.append(error) }
            return answer()
        }
    }

    private func response<Value: Sendable>(
        of request: DataRequest,
        using serializer: some DataResponseSerializerProtocol<Value>
    ) async -> DataResponse<Value, CourierError>? {
        await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                request.response(responseSerializer: serializer) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Adds a response handler per named serializer to the unstarted `request`, starts it, and
    /// returns each handler's error by name once all have answered (`nil` after 30 s).
    private func errors(
        of request: DataRequest,
        handlers: [(name: String, serializer: any DataResponseSerializerProtocol)]
    ) async -> [String: CourierError?]? {
        let (results, continuation) = AsyncStream<(String, CourierError?)>.makeStream()
        func add(_ serializer: some DataResponseSerializerProtocol, named name: String) {
            request.response(responseSerializer: serializer) { continuation.yield((name, $0.error)) }
        }
        for (name, serializer) in handlers { add(serializer, named: name) }
        request.resume()
        return await value(within: hangLimit) { () -> [String: CourierError?] in
            var errors: [String: CourierError?] = [:]
            for await (name, error) in results {
                errors[name] = error
                if errors.count == handlers.count { break }
            }
            return errors
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSerializerFailureIsRetriedWhenTheRetrierSaysSo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: .retryPolicy(exponentialBackoffScale: 0.01))
            let key = UUID().uuidString
            let request = session.request(server.url("/fault/flaky/\(key)?times=1&status=500"))
            let handled = try #require(await response(of: request, using: OnlyOK()))
            #expect(handled.value != nil, "the 500 was retried: \(handled)")
            #expect(server.attempts(forKey: key) == 2)
            #expect(request.retryCount == 1)

            // The awaited form too.
            let awaitedKey = UUID().uuidString
            let awaited = session.request(server.url("/fault/flaky/\(awaitedKey)?times=1&status=500"))
            let value = await awaited.serializingResponse(using: OnlyOK()).result
            #expect((try? value.get()) != nil)
            #expect(server.attempts(forKey: awaitedKey) == 2)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRetrierAddedToTheRequestIsOfferedItsSerializersFailures(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // No retrier at creation: the session has none, nor does the request.
            let session = transport.makeSession()
            let key = UUID().uuidString
            let request = session.request(server.url("/fault/flaky/\(key)?times=1&status=500"))
                .retry(using: RetryPolicy(exponentialBackoffScale: 0.01))
            let handled = try #require(await response(of: request, using: OnlyOK()))
            #expect(handled.value != nil, "the 500 was retried: \(handled)")
            #expect(server.attempts(forKey: key) == 2)

            // An adapter added alone retries nothing: the failure is the handler's result.
            let adaptedKey = UUID().uuidString
            let adapted = session.request(server.url("/fault/flaky/\(adaptedKey)?times=1&status=500"))
                .adapt(using: .adapter { request, _ in request })
            let refused = try #require(await response(of: adapted, using: OnlyOK()))
            #expect(refused.error?.underlyingError is Refused)
            #expect(server.attempts(forKey: adaptedKey) == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRetryPastTheDeadlineLeavesTheOtherHandlersAlone(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            // The retrier wants a retry in 600 s; the deadline (60 s) rules it out at once.
            let session = transport.makeSession(
                { $0.requestDeadline = 60 },
                interceptor: Retrier { _, _, _ in .retryWithDelay(600) }
            )
            let request = session.request(server.url("/status/500"), shouldAutomaticallyResume: false)
            let handled = try #require(
                await errors(
                    of: request,
                    handlers: [("strict", OnlyOK()), ("raw", DataResponseSerializer(emptyResponseCodes: [500]))]
                )
            )
            #expect(handled["strict"]??.underlyingError is Refused)
            #expect(handled.keys.contains("raw") && handled["raw"]?.map(\.kind) == nil, "not the strict one's failure")
            #expect(request.error == nil)
            #expect(request.retryCount == 0)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func withoutARetrierASerializerFailureIsJustTheHandlersResult(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let key = UUID().uuidString
            let request = session.request(server.url("/fault/flaky/\(key)?times=1&status=500"))
            let handled = try #require(await response(of: request, using: OnlyOK()))
            #expect(handled.error?.underlyingError is Refused)
            #expect(server.attempts(forKey: key) == 1)
            #expect(request.error == nil, "a serializer's failure is its handler's, not the request's")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func everyFailingSerializerIsAskedAndARefusalStaysWithItsHandler(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let retrier = CountingRetrier { .doNotRetryWithError(Refused()) }
            let session = transport.makeSession(interceptor: Interceptor(retriers: [retrier]))
            // All three handlers are in place before the request starts.
            let request = session.request(server.url("/status/500"), shouldAutomaticallyResume: false)
            let handled = try #require(
                await errors(
                    of: request,
                    handlers: [
                        ("first", OnlyOK()), ("second", OnlyOK()),
                        ("raw", DataResponseSerializer(emptyResponseCodes: [500])),
                    ]
                )
            )
            #expect(retrier.asked.withLock { $0.count } == 2, "each failing serializer gets its decision")
            #expect(handled["first"]??.kind == .requestRetryFailed)
            #expect(handled["second"]??.kind == .requestRetryFailed)
            #expect(
                handled.keys.contains("raw") && handled["raw"]?.map(\.kind) == nil,
                "the refusal is the failing handlers' alone"
            )
            #expect(request.retryCount == 0)
            await session.invalidate()
        }
    }

    // MARK: - Downloads

    private func response<Value: Sendable>(
        of request: DownloadRequest,
        using serializer: some DownloadResponseSerializerProtocol<Value>
    ) async -> DownloadResponse<Value, CourierError>? {
        await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                request.response(responseSerializer: serializer) { continuation.resume(returning: $0) }
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDownloadSerializerFailureIsRetriedWhenTheRetrierSaysSo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: .retryPolicy(exponentialBackoffScale: 0.01))
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: folder) }
            // The first attempt's 500 is moved into place too: the retry's file replaces it.
            let destination = DownloadRequest.suggestedDownloadDestination(
                in: folder,
                options: [.createIntermediateDirectories, .removePreviousFile]
            )
            let key = UUID().uuidString
            let request = session.download(server.url("/fault/flaky/\(key)?times=1&status=500"), to: destination)
            let handled = try #require(await response(of: request, using: OnlyOK()))
            #expect(handled.value != nil, "the 500 was retried: \(handled)")
            #expect(server.attempts(forKey: key) == 2)
            #expect(request.retryCount == 1)
            let file = try #require(handled.fileURL)
            #expect(try Data(contentsOf: file).count == handled.value, "the file is the retry's whole body")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 1)

            // The awaited form, to a temporary file of Courier's: the retry writes it afresh.
            let awaitedKey = UUID().uuidString
            let awaited = session.download(server.url("/fault/flaky/\(awaitedKey)?times=1&status=500"))
            let result = await awaited.serializingDownload(using: OnlyOK()).response
            #expect(result.value != nil, "\(result)")
            #expect(server.attempts(forKey: awaitedKey) == 2)
            if let file = result.fileURL {
                #expect(try Data(contentsOf: file).count == result.value)
                try? FileManager.default.removeItem(at: file)
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDownloadSerializerRefusalStaysWithItsHandler(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let retrier = CountingRetrier { .doNotRetryWithError(Refused()) }
            let session = transport.makeSession(interceptor: Interceptor(retriers: [retrier]))
            let request = session.download(server.url("/status/500"), shouldAutomaticallyResume: false)
            let strict = Mailbox<DownloadResponse<Int, CourierError>>()
            let raw = Mailbox<DownloadResponse<URL?, CourierError>>()
            request.response(responseSerializer: OnlyOK()) { strict.put($0) }
            request.response { raw.put($0) }
            request.resume()
            let strictResponse = try #require(await strict.value(at: 0))
            let rawResponse = try #require(await raw.value(at: 0))
            #expect(strictResponse.error?.kind == .requestRetryFailed)
            #expect(rawResponse.error == nil, "the refusal is the failing handler's alone")
            #expect(retrier.asked.withLock { $0.count } == 1)
            #expect(request.retryCount == 0)
            if let file = rawResponse.fileURL { try? FileManager.default.removeItem(at: file) }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCancelWhileTheRetrierDecidesFinishesTheDownloadAsItIs(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let asked = Mailbox<Void>()
            let answer = Mailbox<RetryResult>()
            let session = transport.makeSession(
                interceptor: Retrier { _, _, _ in
                    asked.put(())
                    return await answer.value(at: 0) ?? .doNotRetry
                }
            )
            let key = UUID().uuidString
            let request = session.download(server.url("/fault/flaky/\(key)?times=1&status=500"))
            let handled = Task { await response(of: request, using: OnlyOK()) }
            // The file is in place and the serializer failed: a cancel cannot take the file back,
            // so the download finishes as it is, with the serializer's failure, and the retry the
            // retrier then asks for never starts.
            try #require(await asked.value(at: 0) != nil)
            request.cancel()
            answer.put(.retry)
            let finished = try #require(await handled.value)
            #expect(finished.error?.underlyingError is Refused, "\(finished)")
            #expect(request.state == .finished)
            #expect(server.attempts(forKey: key) == 1)
            let file = try #require(finished.fileURL)
            #expect(FileManager.default.fileExists(atPath: file.path))
            try? FileManager.default.removeItem(at: file)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCancelWhileTheFileMovesStopsTheRetry(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession(interceptor: Retrier { _, _, _ in .retry })
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: folder) }
            let made = Mailbox<DownloadRequest>()
            let key = UUID().uuidString
            let request = session.download(
                server.url("/fault/flaky/\(key)?times=1&status=500"),
                to: { _, _ in
                    // While the download commits its file: the cancel cannot stop it, but must
                    // stop the retry that follows.
                    made.values.first?.cancel()
                    return (folder.appendingPathComponent("file"), [.createIntermediateDirectories])
                }
            )
            // Before the first handler starts it.
            made.put(request)
            let handled = try #require(await response(of: request, using: OnlyOK()))
            #expect(handled.error?.underlyingError is Refused, "\(handled)")
            #expect(request.state == .finished)
            #expect(server.attempts(forKey: key) == 1, "no retry after the cancel")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRetriedDownloadThatThenFailsReportsNoFile(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let decisions = CallCounter()
            let session = transport.makeSession(
                interceptor: Retrier { _, _, _ in
                    decisions.increment()
                    return decisions.value == 1 ? .retry : .doNotRetry
                }
            )
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = DownloadRequest.suggestedDownloadDestination(
                in: folder,
                options: [.createIntermediateDirectories]
            )
            let validations = CallCounter()
            // The first attempt passes validation, is moved into place, and fails its serializer;
            // the retry fails validation, and the retrier declines.
            let request = session.download(server.url("/status/500"), to: destination).validate { _, _, _ in
                validations.increment()
                return validations.value == 1 ? .success(()) : .failure(Refused())
            }
            let handled = try #require(await response(of: request, using: OnlyOK()))
            #expect(handled.error?.kind == .responseValidationFailed, "\(handled)")
            #expect(handled.fileURL == nil, "the rejected first file is not this download's any more")
            #expect(request.fileURL == nil)
            #expect(request.retryCount == 1)
            // As in Alamofire, the rejected file stays where it was moved.
            let left = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            #expect(left == ["500"], "\(left)")
            #expect(!FileManager.default.fileExists(atPath: request.temporaryURL.path))
            await session.invalidate()
        }
    }
}
