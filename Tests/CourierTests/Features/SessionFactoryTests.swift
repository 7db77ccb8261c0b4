import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's factory parameters and stream controls: `shouldAutomaticallyResume:`,
/// `streamRequest(parameters:automaticallyCancelOnStreamError:)`, a stream handler that throws,
/// `Stream.token`, `download(parameters:)` and `upload(multipartFormData:with:)`.
@Suite struct SessionFactoryTests {
    struct Args: Decodable {
        var args: [String: String]
    }

    struct Line: Decodable, Sendable {
        var id: Int
    }

    struct HandlerFailure: Error, Equatable {}

    /// Runs `start` with a handler and returns the stream's completion error (`.some(nil)` for success).
    private func completionError(
        _ start: @escaping @Sendable (@escaping @Sendable (CourierError?) -> Void) -> Void
    ) async -> CourierError?? {
        await value(within: hangLimit) {
            await withCheckedContinuation { (continuation: CheckedContinuation<CourierError?, Never>) in
                start { continuation.resume(returning: $0) }
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func shouldAutomaticallyResumeOverridesTheSession(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let held = session.request(server.url("/get"), shouldAutomaticallyResume: false)
            #expect(held.shouldAutomaticallyResume == false)
            let task = held.serializingData()
            await #expect(throws: TestServerError.timedOut, "a response handler does not start it") {
                try await server.waitForRequests(1, timeout: .milliseconds(200))
            }
            #expect(held.state == .initialized)
            held.resume()
            _ = try await task.value

            let manual = transport.makeSession { $0.startRequestsImmediately = false }
            let eager = manual.request(server.url("/get"), shouldAutomaticallyResume: true)
            let result = await value(within: hangLimit) { await eager.validate().serializingData().result }
            #expect(result?.failure == nil && result != nil)
            #expect(manual.request(server.url("/get")).shouldAutomaticallyResume == nil)
            await session.invalidate()
            await manual.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func everyFactoryTakesShouldAutomaticallyResume(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let url = server.url("/get")
            let requests: [Request] = [
                session.request(url, parameters: ["a": "b"], shouldAutomaticallyResume: false),
                session.request(url, parameters: ["a": 1] as Parameters, shouldAutomaticallyResume: false),
                session.request(URLRequest(url: url), shouldAutomaticallyResume: false),
                session.download(url, shouldAutomaticallyResume: false),
                session.download(url, parameters: ["a": "b"], shouldAutomaticallyResume: false),
                session.upload(Data(), to: url, shouldAutomaticallyResume: false),
                session.upload(multipartFormData: MultipartFormData(), to: url, shouldAutomaticallyResume: false),
                session.streamRequest(url, shouldAutomaticallyResume: false),
                Courier.request(url, shouldAutomaticallyResume: false),
            ]
            #expect(requests.allSatisfy { $0.shouldAutomaticallyResume == false })
            requests.forEach { $0.cancel() }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamHandlerThatThrowsEndsTheStreamWithWhatItThrew(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let pieces = TestLock(0)
            let request = session.streamRequest(server.url("/drip?numbytes=1000&duration=60"))
            let ended = await completionError { done in
                request.responseStream { stream in
                    switch stream.event {
                    case .stream:
                        pieces.withLock { $0 += 1 }
                        throw HandlerFailure()
                    case .complete(let completion):
                        done(completion.error)
                    }
                }
            }
            let error = try #require(ended ?? nil)
            #expect(error.kind == .responseSerializationFailed)
            #expect(error.serializationFailureReason.map { "\($0)" }?.contains("customSerializationFailed") == true)
            #expect(error.underlyingError is HandlerFailure)
            #expect(pieces.withLock { $0 } == 1, "no piece after the throw")
            #expect(request.isCancelled)
            #expect(request.error?.underlyingError is HandlerFailure)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func automaticallyCancelOnStreamErrorStopsAtTheFirstBadPiece(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // Lines that are numbers, not `Line` objects: each fails to decode.
            for cancels in [true, false] {
                let failures = TestLock(0)
                let request = session.streamRequest(
                    server.url("/stream/5"),
                    automaticallyCancelOnStreamError: cancels
                )
                #expect(request.automaticallyCancelOnStreamError == cancels)
                let ended = await completionError { done in
                    request.responseStreamDecodable(of: [Int].self) { stream in
                        switch stream.event {
                        case .stream(.failure): failures.withLock { $0 += 1 }
                        case .stream(.success): break
                        case .complete(let completion): done(completion.error)
                        }
                    }
                }
                if cancels {
                    let error = try #require(ended ?? nil)
                    #expect(error.kind == .responseSerializationFailed)
                    // The handler's stream stopped at the first failure. (Whether the request was
                    // cancelled or had already finished depends on timing: this body is small.)
                    #expect(failures.withLock { $0 } == 1)
                } else {
                    #expect(ended.map { $0 == nil } == true, "ended in time, without an error")
                    #expect(failures.withLock { $0 } == 5)
                }
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aTokenCancelsTheStreamFromOutsideTheHandler(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/drip?numbytes=1000&duration=60"))
            let ended = await completionError { done in
                request.responseStream { stream in
                    switch stream.event {
                    case .stream:
                        let token = stream.token
                        DispatchQueue.global().async { token.cancel() }
                    case .complete(let completion):
                        done(completion.error)
                    }
                }
            }
            #expect((ended ?? nil)?.isExplicitlyCancelledError == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamRequestEncodesParameters(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var body = Data()
            for try await piece in session.streamRequest(server.url("/get"), parameters: ["q": "swift"]).validate()
                .streamingData()
            {
                body.append(piece)
            }
            #expect(try JSONDecoder().decode(Args.self, from: body).args == ["q": "swift"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadEncodesParameters(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let encoded = try await session.download(server.url("/get"), parameters: ["q": "swift"])
                .validate().serializingDecodable(Args.self).value
            #expect(encoded.args == ["q": "swift"])
            let dictionary = try await session.download(
                server.url("/get"),
                parameters: ["page": 2, "q": "x"],
                encoding: URLEncoding.queryString
            ).validate().serializingDecodable(Args.self).value
            #expect(dictionary.args == ["page": "2", "q": "x"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func multipartUploadWithARequestOfYourOwn(transport: TransportKind) async throws {
        struct Parts: Decodable {
            struct Part: Decodable {
                var name: String
                var bytes: Int
            }
            var parts: [Part]
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var urlRequest = URLRequest(url: server.url("/upload/multipart"))
            urlRequest.method = .post
            urlRequest.headers.add(name: "X-Mine", value: "1")
            let request = session.upload(
                multipartFormData: { form in
                    form.append(Data("hello".utf8), withName: "greeting")
                    form.append(Data("42".utf8), withName: "answer")
                },
                with: urlRequest
            )
            let parts = try await request.validate().serializingDecodable(Parts.self).value
            #expect(parts.parts.map(\.name) == ["greeting", "answer"])
            #expect(parts.parts.map(\.bytes) == [5, 2])
            #expect(request.performedRequests.first?.value(forHTTPHeaderField: "X-Mine") == "1")
            await session.invalidate()
        }
    }

    @Test func aRequestShowsItsConvertible() throws {
        let session = Session()
        let url = try #require(URL(string: "http://127.0.0.1:9/x"))
        let request = session.request(URLRequest(url: url), shouldAutomaticallyResume: false)
        #expect((request.convertible as? URLRequest)?.url == url)
        request.cancel()
    }
}
