import AsyncHTTPClient
import Courier
import Foundation
import NIOCore

// @unchecked Sendable: `stream` is touched only on `queue`, one open or read at a time.
/// Reads a file or stream body in chunks off the event loop and writes each to the connection,
/// reading the next only when the previous write is done: memory stays at one chunk, and a slow
/// server slows the reading (backpressure).
final class BodyPump: @unchecked Sendable {
    /// The body could not be opened or read; the attempt fails with `URLError(.cannotOpenFile)`.
    struct Failure: Error {
        let underlying: any Error
    }

    /// Big enough to keep a fast connection busy, small enough to keep memory flat.
    static let chunkSize = 128 * 1024

    private let stream: InputStream
    private let writer: HTTPClient.Body.StreamWriter
    private let promise: EventLoopPromise<Void>
    private let queue: DispatchQueue

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
                pump.sendNextChunk()
            } catch {
                promise.fail(Failure(underlying: error))
            }
        }
        return promise.futureResult
    }

    private func sendNextChunk() {
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
            return
        }
        if readResult == 0 {
            finish(.success(()))
            return
        }
        writer.write(.byteBuffer(buffer)).whenComplete { [self] result in
            switch result {
            case .success: queue.async { self.sendNextChunk() }
            case .failure(let error): queue.async { self.finish(.failure(error)) }
            }
        }
    }

    private func finish(_ result: Result<Void, any Error>) {
        stream.close()
        promise.completeWith(result)
    }
}
