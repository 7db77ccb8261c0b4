import AsyncHTTPClient
import Courier
import Foundation
import NIOCore

// @unchecked Sendable: `stream`, `writesInFlight`, `reachedEnd` and `isFinished` are touched
// only on `queue`, a serial queue.
/// Reads a file or stream body in chunks off the event loop and writes each to the connection.
///
/// It reads one chunk ahead: while the event loop takes one chunk, the next is read, so the
/// connection does not wait for the disk between chunks (with one chunk at a time an upload to
/// nginx on loopback ran at 0.6 times raw AsyncHTTPClient's rate, for the same CPU). It stops
/// reading while ``maximumWritesInFlight`` writes are unfinished: AsyncHTTPClient leaves a write's
/// future pending while the connection cannot take more, so memory stays at a few chunks and a
/// slow server slows the reading (backpressure).
final class BodyPump: @unchecked Sendable {
    /// The body could not be opened or read; the attempt fails with `URLError(.cannotOpenFile)`.
    struct Failure: Error {
        let underlying: any Error
    }

    /// Big enough to keep a fast connection busy, small enough to keep memory flat.
    static let chunkSize = 128 * 1024

    /// Writes handed to the connection and not yet finished, at most: one being sent, one ready.
    static let maximumWritesInFlight = 2

    private let stream: InputStream
    private let writer: HTTPClient.Body.StreamWriter
    private let promise: EventLoopPromise<Void>
    private let queue: DispatchQueue
    private var writesInFlight = 0
    private var reachedEnd = false
    private var isFinished = false

    private init(
        stream: InputStream,
        writer: HTTPClient.Body.StreamWriter,
        promise: EventLoopPromise<Void>,
        queue: DispatchQueue
    ) {
        self.stream = stream
        self.writer = writer
        self.promise = promise
        self.queue = queue
    }

    /// Opens `body` and starts sending it; the future ends when all is written, or fails.
    static func start(
        _ body: RequestBody,
        writer: HTTPClient.Body.StreamWriter,
        eventLoop: any EventLoop
    ) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let queue = DispatchQueue(label: "Courier.BodyPump")
        // Opening a file touches the disk: off the event loop, like the reads.
        queue.async {
            do {
                let pump = BodyPump(stream: try body.openInputStream(), writer: writer, promise: promise, queue: queue)
                pump.sendChunks()
            } catch {
                promise.fail(Failure(underlying: error))
            }
        }
        return promise.futureResult
    }

    /// Reads and writes chunks until enough writes are unfinished, the body ends, or it fails.
    private func sendChunks() {
        while !isFinished, !reachedEnd, writesInFlight < Self.maximumWritesInFlight {
            guard let chunk = readChunk() else { return }
            guard chunk.readableBytes > 0 else {
                reachedEnd = true
                break
            }
            writesInFlight += 1
            writer.write(.byteBuffer(chunk)).whenComplete { [self] result in
                queue.async { self.writeFinished(result) }
            }
        }
        // The body ends only when its last write has: AsyncHTTPClient fails a write made after it.
        if reachedEnd, writesInFlight == 0 { finish(.success(())) }
    }

    private func writeFinished(_ result: Result<Void, any Error>) {
        writesInFlight -= 1
        switch result {
        case .success: sendChunks()
        case .failure(let error): finish(.failure(error))
        }
    }

    /// The next chunk, empty at the end of the body, or nil when reading failed (and the pump
    /// finished with the failure).
    private func readChunk() -> ByteBuffer? {
        var buffer = ByteBufferAllocator().buffer(capacity: Self.chunkSize)
        var readResult = 0
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.chunkSize) { pointer in
            guard let base = pointer.baseAddress else { return 0 }
            readResult = stream.read(base.assumingMemoryBound(to: UInt8.self), maxLength: Self.chunkSize)
            return max(readResult, 0)
        }
        if readResult < 0 {
            // `streamError` traps unless the status says there is one (Linux Foundation).
            let cause = stream.streamStatus == .error ? stream.streamError : nil
            finish(
                .failure(
                    Failure(underlying: CourierError.createUploadableFailed(cause ?? CocoaError(.fileReadUnknown)))
                )
            )
            return nil
        }
        return buffer
    }

    private func finish(_ result: Result<Void, any Error>) {
        guard !isFinished else { return }
        isFinished = true
        stream.close()
        promise.completeWith(result)
    }
}
