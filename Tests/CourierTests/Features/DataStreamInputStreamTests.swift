import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's `asInputStream(bufferSize:)`: the body read from a blocking `InputStream`.
@Suite struct DataStreamInputStreamTests {
    /// Reads `stream` to its end on a thread of its own (reads block), `size` bytes at a time.
    private static func readAll(_ stream: InputStream, size: Int = 4096) async -> (data: Data, result: Int)? {
        final class Box: @unchecked Sendable {  // Handed to one thread, then back.
            let stream: InputStream
            init(_ stream: InputStream) { self.stream = stream }
        }
        let box = Box(stream)
        return await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    var data = Data()
                    var buffer = [UInt8](repeating: 0, count: size)
                    box.stream.open()
                    var result = 0
                    repeat {
                        result = box.stream.read(&buffer, maxLength: size)
                        if result > 0 { data.append(contentsOf: buffer[0..<result]) }
                    } while result > 0
                    continuation.resume(returning: (data, result))
                }
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theBodyIsReadToItsEnd(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let url = server.url("/stream-bytes/300000?seed=7&chunk_size=10000")
            let expected = try await session.request(url).serializingData().value
            // A buffer smaller than a piece: the transfer waits for the reader again and again.
            let stream = session.streamRequest(url).asInputStream(bufferSize: 1024)
            let read = await Self.readAll(stream, size: 777)
            #expect(read?.result == 0, "the end")
            #expect(read?.data == expected)
            #expect(stream.streamStatus == .atEnd)
            #expect(stream.streamError == nil)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFailedRequestIsAReadError(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let stream = session.streamRequest(server.url("/status/500")).validate().asInputStream()
            let read = await Self.readAll(stream)
            #expect(read?.result == -1)
            #expect(stream.streamStatus == .error)
            #expect((stream.streamError as? CourierError)?.responseCode == 500)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func closingWhileWaitingEndsTheReadWithoutCancellingTheRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/drip?numbytes=4&duration=1"))
            // Another reader, there from the start.
            let received = TestLock(0)
            let (ends, ended) = AsyncStream<CourierError?>.makeStream()
            request.responseStream { stream in
                switch stream.event {
                case .stream(let result): received.withLock { $0 += result.get().count }
                case .complete(let completion):
                    ended.yield(completion.error)
                    ended.finish()
                }
            }
            let stream = request.asInputStream()
            stream.open()
            stream.close()
            var byte: UInt8 = 0
            #expect(stream.read(&byte, maxLength: 1) == -1, "closed: nothing more is read")
            #expect(stream.streamStatus == .closed)
            // The request goes on without this reader.
            let error = await value(within: hangLimit) { await ends.first { _ in true } }
            // Ended in time, with a completion: what is left is the completion's error.
            let completed = try #require(error, "the request ended in time")
            let outcome = try #require(completed, "with a completion")
            #expect(outcome == nil, "not cancelled: \(String(describing: outcome))")
            #expect(received.withLock { $0 } == 4)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyCutShortIsSeenByALoopOnHasBytesAvailable(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // 1,000 bytes sent of the 2,000 declared, then the connection closes.
            let stream = session.streamRequest(server.url("/fault/content-length/1000")).asInputStream()
            final class Box: @unchecked Sendable {  // Handed to one thread, then back.
                let stream: InputStream
                init(_ stream: InputStream) { self.stream = stream }
            }
            let box = Box(stream)
            let outcome = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<(Int, Int), Never>) in
                    Thread.detachNewThread {
                        var buffer = [UInt8](repeating: 0, count: 256)
                        var total = 0
                        var last = 0
                        box.stream.open()
                        while box.stream.hasBytesAvailable {
                            last = box.stream.read(&buffer, maxLength: buffer.count)
                            if last <= 0 { break }
                            total += last
                        }
                        continuation.resume(returning: (total, last))
                    }
                }
            }
            #expect(outcome?.1 == -1, "the loop ends on the failure, not as if the body were whole")
            #expect((outcome?.0 ?? 0) <= 1000)
            #expect(stream.streamError is CourierError)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func closingWakesAReaderThatWaits(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // The server never answers (for 5 minutes): a read waits.
            let request = session.streamRequest(server.url("/fault/hang"))
            let stream = request.asInputStream()
            final class Box: @unchecked Sendable {  // Shared by the reader and the closer.
                let stream: InputStream
                init(_ stream: InputStream) { self.stream = stream }
            }
            let box = Box(stream)
            let (started, starting) = AsyncStream<Void>.makeStream()
            let result = Task {
                await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
                    Thread.detachNewThread {
                        var byte: UInt8 = 0
                        box.stream.open()
                        starting.yield()
                        continuation.resume(returning: box.stream.read(&byte, maxLength: 1))
                    }
                }
            }
            _ = await started.first { _ in true }
            box.stream.close()
            let read = await value(within: hangLimit) { await result.value }
            #expect(read == -1, "woken by the close")
            #expect(!request.isFinished, "not by the request's end")
            request.cancel()
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamLetGoUnreadHoldsNothingBack(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/stream-bytes/200000?chunk_size=10000"))
            let received = TestLock(0)
            let (ends, ended) = AsyncStream<Void>.makeStream()
            request.responseStream { stream in
                switch stream.event {
                case .stream(let result): received.withLock { $0 += result.get().count }
                case .complete:
                    ended.yield()
                    ended.finish()
                }
            }
            // A tiny buffer, never read, and let go at once.
            _ = request.asInputStream(bufferSize: 1)
            let completed = await value(within: hangLimit) { await ends.first { _ in true } != nil }
            #expect(completed == true, "the other reader got the whole body")
            #expect(received.withLock { $0 } == 200_000)
            await session.invalidate()
        }
    }
}
