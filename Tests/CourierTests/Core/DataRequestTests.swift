import Courier
import CourierTestServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `/get` and friends echo back.
struct Echo: Decodable, Sendable {
    var args: [String: String]
    var headers: [String: String]
    var url: String
    var json: [String: String]?
}

@Suite struct DataRequestTests {
    @Test(arguments: TransportKind.allCases)
    func getDecodesAJSONBody(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let echo = try await session.request(
                server.url("/get").absoluteString,
                parameters: ["q": "swift", "n": "1"],
                headers: ["Accept": "application/json"]
            )
            .validate()
            .serializingDecodable(Echo.self).value
            #expect(echo.args == ["q": "swift", "n": "1"])
            #expect(echo.url.hasSuffix("/get?n=1&q=swift"))
            #expect(echo.headers["User-Agent"]?.contains("Courier/") == true)
            #expect(echo.headers["Accept"] == "application/json")
            await session.invalidate()
        }
    }

    /// The head and the `HTTPURLResponse` built from it on demand say the same, on both transports
    /// (over AsyncHTTPClient the head comes as parts; over URLSession it wraps URLSession's response).
    @Test(arguments: TransportKind.allCases)
    func theResponseHeadAgreesWithTheHTTPURLResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let url = server.url("/response-headers?X-Trace=abc")
            let request = session.request(url).validate()
            let dataResponse = await request.serializingString().response
            let head = try #require(dataResponse.head)
            #expect(head.statusCode == 200)
            #expect(head.mimeType == "application/json")
            #expect(head.textEncodingName == nil)
            #expect(head.value(forHTTPHeaderField: "x-trace") == "abc")
            #expect(head.headers.value(for: "X-TRACE") == "abc")
            #expect(head.expectedContentLength == Int64(dataResponse.data?.count ?? -2))
            let response = try #require(dataResponse.response)
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "X-Trace") == "abc")
            #expect(response.mimeType == head.mimeType)
            #expect(request.responseHead?.statusCode == 200)
            #expect(request.response === response, "built once, and the request's is the same")
            await session.invalidate()
        }
    }

    /// A request built with Alamofire's `URLRequest(url:method:headers:)` goes out as built.
    @Test(arguments: TransportKind.allCases)
    func aURLRequestBuiltTheAlamofireWayGoesOutAsBuilt(transport: TransportKind) async throws {
        struct MethodEcho: Decodable, Sendable {
            var method: String
            var headers: [String: String]
        }
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = try URLRequest(url: server.url("/anything"), method: .put, headers: ["X-Trace": "abc"])
            let echo = try await session.request(request).validate().serializingDecodable(MethodEcho.self).value
            #expect(echo.method == "PUT")
            #expect(echo.headers["X-Trace"] == "abc")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func postSendsJSONParameters(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let echo = try await session.request(
                server.url("/post"),
                method: .post,
                parameters: ["name": "Courier"],
                encoder: JSONParameterEncoder.default
            )
            .serializingDecodable(Echo.self).value
            #expect(echo.json == ["name": "Courier"])
            #expect(echo.headers["Content-Type"] == "application/json")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func completionHandlersRunOnceOnTheGivenQueue(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let queue = DispatchQueue(label: "test.handlers")
            let key = DispatchSpecificKey<Int>()
            queue.setSpecific(key: key, value: 7)
            let response: DataResponse<String, CourierError> = await withCheckedContinuation { continuation in
                session.request(server.url("/encoding/utf8")).responseString(queue: queue) { response in
                    #expect(DispatchQueue.getSpecific(key: key) == 7)
                    continuation.resume(returning: response)
                }
            }
            #expect(response.value?.contains("日本語") == true)
            #expect(response.response?.statusCode == 200)
            #expect(response.metrics?.statusCode == 200)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func validationFailuresNameTheStatusCode(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let result = await session.request(server.url("/status/503")).validate().serializingData().result
            guard case .failure(let error) = result else {
                Issue.record("a 503 must fail validation")
                return
            }
            #expect(error.kind == .responseValidationFailed)
            #expect(error.responseCode == 503)
            #expect(error.errorDescription?.contains("503") == true)
            let accepted = await session.request(server.url("/status/503")).validate(statusCode: [503]).serializingData(
                emptyResponseCodes: [503]
            ).result
            #expect((try? accepted.get()) != nil)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func contentTypeValidationHonoursAcceptAndWildcards(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let xml = await session.request(server.url("/xml"), headers: ["Accept": "application/json"]).validate()
                .serializingString().result
            #expect((try? xml.get()) == nil)
            if case .failure(let error) = xml,
                case .unacceptableContentType(let acceptable, let actual)? = error.validationFailureReason
            {
                #expect(acceptable == ["application/json"])
                #expect(actual == "application/xml")
            } else {
                Issue.record("expected an unacceptable content type, got \(xml)")
            }
            // The error lists the acceptable types sorted, as Alamofire's does.
            let unsorted = await session.request(server.url("/xml"))
                .validate(contentType: ["text/plain", "application/json", "image/png"]).serializingString().response
            if case .unacceptableContentType(let listed, _)? = unsorted.error?.validationFailureReason {
                #expect(listed == ["application/json", "image/png", "text/plain"])
            } else {
                Issue.record("expected an unacceptable content type, got \(unsorted)")
            }
            let wildcard = await session.request(server.url("/xml")).validate(contentType: ["application/*"])
                .serializingString().result
            #expect((try? wildcard.get())?.contains("<slideshow") == true)
            let empty = await session.request(server.url("/status/204")).validate(contentType: ["application/json"])
                .serializingData().result
            #expect((try? empty.get()) == Data(), "an empty body passes a content-type check")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func customValidatorsRunInOrder(transport: TransportKind) async throws {
        struct Rejected: Error {}
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let result = await session.request(server.url("/get"))
                .validate { _, response, _ in response.statusCode == 200 ? .success(()) : .failure(Rejected()) }
                .validate { _, _, data in (data?.isEmpty ?? true) ? .success(()) : .failure(Rejected()) }
                .serializingData().result
            guard case .failure(let error) = result,
                case .customValidationFailed(let underlying)? = error.validationFailureReason
            else {
                Issue.record("the second validator must fail")
                return
            }
            #expect(underlying is Rejected)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func emptyResponsesFollowTheSerializerPolicy(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let noContent = await session.request(server.url("/status/204")).serializingDecodable(Empty.self).result
            #expect((try? noContent.get()) == Empty.value)
            let head = await session.request(server.url("/json"), method: .head).serializingString().result
            #expect((try? head.get()) == "")
            let emptyOK = await session.request(server.url("/status/200")).serializingDecodable(Echo.self).result
            guard case .failure(let error) = emptyOK, case .inputDataNilOrZeroLength? = error.serializationFailureReason
            else {
                Issue.record("an empty 200 cannot decode into Echo")
                return
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func decodingFailuresKeepTheDecoderError(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let result = await session.request(server.url("/xml")).serializingDecodable(Echo.self).result
            guard case .failure(let error) = result,
                case .decodingFailed(let underlying)? = error.serializationFailureReason
            else {
                Issue.record("XML cannot decode as JSON")
                return
            }
            #expect(underlying is DecodingError)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func metricsDescribeTheAttempt(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/bytes/1000"))
            let response = await request.serializingData().response
            let metrics = try #require(response.metrics)
            #expect(metrics.statusCode == 200)
            #expect(metrics.bytesReceived == 1000)
            #expect(metrics.timeToFirstByte != nil)
            #expect(metrics.endDate >= metrics.startDate)
            #expect(request.allMetrics.count == 1)
            if transport == .asyncHTTPClient { #expect(metrics.networkProtocolName == "http/1.1") }
            #expect(request.performedRequests.count == 1)
            #expect(request.state == .finished)
            #expect(request.downloadProgress.completedUnitCount == 1000)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func bytesSentCountsTheBodyOnceThroughARedirect(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let body = Data(repeating: 0x61, count: 1000)
            let request = session.request(
                server.url("/redirect-to?url=/post&status_code=307"),
                method: .post
            ) {
                $0.httpBody = body
                // Else FoundationNetworking sends a POST as a form, and the echo reads it as one.
                $0.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            }
            let echo = try await request.serializingDecodable([String: JSONScalar].self).value
            #expect(request.metrics?.bytesSent == 1000)
            #expect(request.uploadProgress.completedUnitCount == 1000)
            // Courier follows the 307 itself on both transports (FoundationNetworking, following it,
            // sent `Content-Length: 0`).
            #expect(echo["data"] == .string(String(repeating: "a", count: 1000)), "the 307 resent the body")
            await session.invalidate()
        }
    }
}

@Suite struct ProgressAndLifetimeTests {
    @Test(arguments: TransportKind.allCases)
    func downloadProgressReportsEveryChunkOnTheGivenQueue(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let updates = CallCounter()
            let last = LastValue()
            let queue = DispatchQueue(label: "test.progress")
            let request = session.request(server.url("/stream-bytes/200000?chunk_size=20000"))
                .downloadProgress(queue: queue) { progress in
                    updates.increment()
                    last.set(progress.completedUnitCount)
                }
            let data = try await request.serializingData().value
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }  // drain the queue
            #expect(data.count == 200_000)
            #expect(updates.value >= 1)
            #expect(last.value == 200_000)
            await session.invalidate()
        }
    }

    @Test func anOwnedAsyncHTTPClientIsShutDownWhenTheSessionGoesAway() async throws {
        try await TestServer.withRunningServer { server in
            var session: Session? = TransportKind.asyncHTTPClient.makeSession()
            _ = try await session?.request(server.url("/get")).serializingData().value
            weak let weakSession = session
            session = nil
            #expect(weakSession == nil, "the session is released, and its client shut down without a crash")
        }
    }
}

/// The latest value set, readable from any thread.
///
/// `@unchecked Sendable`: `stored` is only touched while `lock` is held.
final class LastValue: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Int64 = -1

    func set(_ value: Int64) {
        lock.lock()
        stored = value
        lock.unlock()
    }

    var value: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

@Suite struct RequestLifetimeTests {
    @Test(arguments: TransportKind.allCases)
    func finishedRequestsAreReleased(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var request: DataRequest? = session.request(server.url("/get"))
            _ = try await request?.serializingData().value
            weak let released = request
            request = nil
            // Shutting the transport down waits until its threads have let go of the attempt.
            await session.invalidate()
            #expect(released == nil, "no reference cycle keeps a finished request alive")
        }
    }
}

extension RequestLifetimeTests {
    @Test(arguments: TransportKind.allCases)
    func validatedRequestsAreReleased(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var request: DataRequest? = session.request(server.url("/get")).validate()
                .downloadProgress { _ in }
            _ = try await request?.serializingData().value
            weak let released = request
            request = nil
            await session.invalidate()
            #expect(released == nil, "validators and progress handlers do not keep the request alive")
        }
    }
}
