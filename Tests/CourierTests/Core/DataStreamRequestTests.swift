import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One line of `/stream/:n`.
private struct StreamLine: Decodable, Sendable {
    let id: Int
    let url: String
}

@Suite struct DataStreamRequestTests {
    @Test(arguments: TransportKind.allCases)
    func decodesJSONLinesInOrder(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var ids: [Int] = []
            for try await line in session.streamRequest(server.url("/stream/25")).validate()
                .streamingDecodable(StreamLine.self)
            {
                ids.append(line.id)
            }
            #expect(ids == Array(0..<25))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func handlerGetsEveryPieceThenTheEnd(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let received = Mutex(Data())
            let completion = await value(within: hangLimit) {
                await withCheckedContinuation {
                    (continuation: CheckedContinuation<DataStreamRequest.Completion, Never>) in
                    session.streamRequest(server.url("/range/500000")).validate().responseStream { stream in
                        switch stream.event {
                        case .stream(.success(let data)): received.withLock { $0.append(data) }
                        case .complete(let completion): continuation.resume(returning: completion)
                        }
                    }
                }
            }
            #expect(completion?.error == nil)
            #expect(completion?.response?.statusCode == 200)
            #expect(received.withLock { $0 } == rangePattern(500_000))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func decodableHandlerReportsABadLineAndGoesOn(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let events = Mutex<[Result<Int, CourierError>]>([])
            // `/range` sends letters, not JSON: every line fails to decode, and the stream still ends.
            let ended = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    session.streamRequest(server.url("/stream/3")).responseStreamDecodable(of: Int.self) { stream in
                        switch stream.event {
                        case .stream(let result): events.withLock { $0.append(result) }
                        case .complete: continuation.resume(returning: true)
                        }
                    }
                }
            }
            #expect(ended == true)
            let results = events.withLock { $0 }
            #expect(results.count == 3)
            #expect(results.allSatisfy { $0.failure?.kind == .responseSerializationFailed })
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func validationFailsBeforeTheFirstPiece(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var pieces = 0
            do {
                for try await _ in session.streamRequest(server.url("/range/100000")).validate(
                    contentType: ["application/json"]
                ).streamingData() {
                    pieces += 1
                }
                Issue.record("the stream should have failed")
            } catch let error as CourierError {
                #expect(error.kind == .responseValidationFailed)
            }
            #expect(pieces == 0)
            let status = await value(within: hangLimit) {
                var count = 0
                do {
                    for try await _ in session.streamRequest(server.url("/status/503")).validate().streamingData() {
                        count += 1
                    }
                    return nil as Int?
                } catch {
                    return (error as? CourierError)?.responseCode
                }
            }
            #expect(status == 503)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func leavingTheLoopCancelsTheTransfer(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // A minute of drip: only a cancellation ends the test within its bounds.
            let request = session.streamRequest(server.url("/drip?numbytes=1000&duration=60"))
            let first = await value(within: hangLimit) { () -> Result<Int, CourierError> in
                do {
                    for try await chunk in request.streamingData() { return .success(chunk.count) }
                    return .success(0)
                } catch {
                    return .failure(error as? CourierError ?? .explicitlyCancelled)
                }
            }
            let firstCount = try #require(first, "a piece arrived in time").get()
            #expect(firstCount > 0)
            // The loop's iterator is gone by now, and with it the request.
            #expect(request.isCancelled)
            #expect(request.error?.isExplicitlyCancelledError == true)
            await session.invalidate()
        }
    }

    /// FoundationNetworking cannot pause a transfer (see `URLSessionTransportTask.pausesTransfers`):
    /// there, only the AsyncHTTPClient transport holds the network back.
    @Test(arguments: TransportKind.allCases.filter { $0 != .urlSession || URLSessionTransport.pausesTransfers })
    func aSlowConsumerHoldsTheTransferBack(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let length = 8 << 20
            let (received, receivedBytes) = AsyncStream<Int64>.makeStream()
            let request = session.streamRequest(server.url("/range/\(length)?chunk_size=65536"))
                .downloadProgress { receivedBytes.yield($0.completedUnitCount) }
            var iterator = request.streamingData(bufferLimit: 256 << 10).makeAsyncIterator()
            var consumed = try await iterator.next()?.count ?? 0
            // The loop now stands still: the transport must stop well short of the whole body
            // (socket buffers let a few hundred kilobytes through).
            let ceiling: Int64 = 3 << 20
            let overran = await value(within: 1) {
                for await bytes in received where bytes > ceiling { return true }
                return false
            }
            #expect(overran == nil, "the transfer went on while nobody read")
            while let chunk = try await iterator.next() { consumed += chunk.count }
            #expect(consumed == length)
            receivedBytes.finish()
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func suspendingMidBodyNeitherLosesNorRepeatsData(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let length = 2_000_000
            let request = session.streamRequest(server.url("/range/\(length)?chunk_size=65536"))
            let received = Mutex(Data())
            let completion = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<CourierError?, Never>) in
                    request.responseStream { [request] stream in
                        switch stream.event {
                        case .stream(.success(let data)):
                            let isFirst = received.withLock { body in
                                defer { body.append(data) }
                                return body.isEmpty
                            }
                            guard isFirst else { return }
                            request.suspend()
                            DispatchQueue.global().async { request.resume() }
                        case .complete(let completion):
                            continuation.resume(returning: completion.error)
                        }
                    }
                }
            }
            let ended = try #require(completion, "the stream ended in time")
            #expect(ended == nil)
            #expect(received.withLock { $0 } == rangePattern(length), "every byte once, in order")
            #expect(request.allMetrics.count == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRejectedHeadCanBeRetried(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let policy = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 0, exponentialBackoffScale: 0)
            let session = transport.makeSession(interceptor: policy)
            let request = session.streamRequest(server.url("/fault/flaky/stream?times=1&status=503")).validate()
            let pieces = await value(within: hangLimit) { () -> Int? in
                var count = 0
                do {
                    for try await piece in request.streamingData() { count += piece.count }
                } catch {
                    return nil
                }
                return count
            }
            #expect((pieces.flatMap { $0 } ?? 0) > 0, "the retry's body arrived")
            #expect(request.retryCount == 1)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aLoopOverAFinishedStreamEndsAtOnce(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/stream/2"))
            for try await _ in request.streamingData() {}
            let ended = await value(within: hangLimit) { () -> Bool in
                do {
                    for try await _ in request.streamingData() {}
                    return true
                } catch {
                    return true
                }
            }
            #expect(ended == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func decodesJSONLinesFromRealHttpbin(transport: TransportKind) async throws {
        guard let httpbin = ProcessInfo.processInfo.environment["HTTPBIN_URL"] else { return }
        let session = transport.makeSession()
        var ids: [Int] = []
        for try await line in session.streamRequest("\(httpbin)/stream/10").validate().streamingDecodable(
            StreamLine.self
        ) {
            ids.append(line.id)
        }
        #expect(ids == Array(0..<10))
        await session.invalidate()
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamWithoutLineBreaksFailsAtTheLineLimit(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // `/range` sends letters and no line break: 1.5 MiB of one line, past the 1 MiB default.
            let outcome = await value(within: hangLimit) { () -> Result<Int, CourierError> in
                var count = 0
                do {
                    for try await _ in session.streamRequest(server.url("/range/1572864?chunk_size=65536"))
                        .streamingDecodable(String.self)
                    {
                        count += 1
                    }
                    return .success(count)
                } catch {
                    return .failure((error as? CourierError) ?? .explicitlyCancelled)
                }
            }
            let error = try #require(outcome?.failure, "the loop ends with an error")
            #expect(error.kind == .streamLineTooLong)
            #expect(error.errorDescription?.contains("\(DataStreamRequest.defaultMaximumLineLength) bytes") == true)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theHandlerReportsALineTooLongThenStops(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let events = Mutex<[Result<String, CourierError>]>([])
            let completion = await value(within: hangLimit) {
                await withCheckedContinuation {
                    (continuation: CheckedContinuation<DataStreamRequest.Completion, Never>) in
                    // Paced over seconds, so the request is still running when the line fails.
                    session.streamRequest(server.url("/range/1000000?chunk_size=8192&duration=20"))
                        .responseStreamDecodable(of: String.self, maximumLineLength: 4096) { stream in
                            switch stream.event {
                            case .stream(let result): events.withLock { $0.append(result) }
                            case .complete(let completion): continuation.resume(returning: completion)
                            }
                        }
                }
            }
            let results = events.withLock { $0 }
            #expect(results.count == 1, "one failure, then the end")
            #expect(results.first?.failure?.kind == .streamLineTooLong)
            // The transfer was stopped, and the completion says why.
            #expect(completion?.error?.kind == .streamLineTooLong)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aLongLegalLinePasses(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // Each line is exactly the limit: a JSON string of a's in quotes. (A limit of its own:
            // splitting and decoding megabyte lines in a debug build would hold a thread of the
            // shared pool that the other tests need.)
            let length = 64 * 1024
            let lines = await value(within: 60) { () -> [Int]? in
                var lengths: [Int] = []
                do {
                    for try await line in session.streamRequest(server.url("/lines?count=3&length=\(length)&crlf=1"))
                        .validate().streamingDecodable(String.self, maximumLineLength: length)
                    {
                        lengths.append(line.utf8.count)
                    }
                } catch {
                    Issue.record("\(error)")
                    return nil
                }
                return lengths
            }
            #expect(lines == [length - 2, length - 2, length - 2])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func manyTinyPiecesSplitRight(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // One-byte chunks: every line, and every CRLF, arrives cut up.
            let values = await value(within: 60) { () -> [String]? in
                var values: [String] = []
                do {
                    for try await line in session.streamRequest(
                        server.url("/lines?count=300&length=9&crlf=1&chunk_size=1")
                    )
                    .validate().streamingDecodable(String.self) {
                        values.append(line)
                    }
                } catch {
                    Issue.record("\(error)")
                    return nil
                }
                return values
            }
            #expect(values == Array(repeating: "aaaaaaa", count: 300))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func completionCarriesTheHeadAndBuildsNoHTTPURLResponseUnlessRead(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/stream/3")).validate()
            let completion = await value(within: hangLimit) {
                await withCheckedContinuation {
                    (continuation: CheckedContinuation<DataStreamRequest.Completion, Never>) in
                    request.responseStream { stream in
                        if case .complete(let completion) = stream.event { continuation.resume(returning: completion) }
                    }
                }
            }
            #expect(completion?.error == nil)
            let head = try #require(completion?.head)
            #expect(head.statusCode == 200)
            #expect(request.responseHead === head)
            // URLSession hands over a ready HTTPURLResponse; over AsyncHTTPClient nothing built one.
            #expect(head.hasHTTPURLResponse == (transport == .urlSession))
            #expect(completion?.response?.statusCode == 200, "built when read")
            #expect(head.hasHTTPURLResponse)
            await session.invalidate()
        }
    }
}
