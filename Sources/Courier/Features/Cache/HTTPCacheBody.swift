import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A stored response's body, read in chunks: a body of any size is served in constant memory.
///
/// A disk store's body holds its file open from the lookup on, so the entry being replaced or
/// evicted meanwhile does not cut a reader short (the file's bytes stay until it is closed).
/// Reads take an offset and never move a shared position, so one body may be read from any
/// thread, even by several readers at once.
final class HTTPCacheBody: Sendable {
    private enum Source: Sendable {
        case data(Data)
        /// An open file descriptor, closed when the body goes.
        case file(Int32)
    }

    /// The body's length in bytes.
    let count: Int64
    private let source: Source

    /// A body held in memory.
    init(data: Data) {
        count = Int64(data.count)
        source = .data(data)
    }

    /// A body read from the open file `descriptor`, of `count` bytes; the body closes it.
    init(fileDescriptor descriptor: Int32, count: Int64) {
        self.count = count
        source = .file(descriptor)
    }

    deinit {
        if case .file(let descriptor) = source { close(descriptor) }
    }

    /// Up to `maximumLength` bytes from `offset`; empty at or past the end.
    ///
    /// - Throws: ``CourierError/Kind-swift.struct/invalidResponse`` when the stored file cannot be
    ///   read to its recorded length (another process shortened it, or the disk failed): the
    ///   cached response is unusable, as a server's broken one would be.
    func read(from offset: Int64, maximumLength: Int) throws -> Data {
        guard offset >= 0, offset < count, maximumLength > 0 else { return Data() }
        let length = Int(min(Int64(maximumLength), count - offset))
        switch source {
        case .data(let data):
            let start = data.startIndex + Int(offset)
            return data.subdata(in: start..<(start + length))
        case .file(let descriptor):
            var chunk = Data(count: length)
            var filled = 0
            while filled < length {
                let read = chunk.withUnsafeMutableBytes { buffer in
                    pread(
                        descriptor,
                        buffer.baseAddress.map { $0 + filled },
                        length - filled,
                        off_t(offset) + off_t(filled)
                    )
                }
                if read < 0, errno == EINTR { continue }
                guard read > 0 else {
                    throw CourierError.invalidResponse(reason: "a cached body could not be read (it was shortened)")
                }
                filled += read
            }
            return chunk
        }
    }

    /// The whole body, for callers that want it in memory; `nil` when it is longer than `limit`
    /// bytes (read it in chunks with ``read(from:maximumLength:)`` instead).
    func data(limit: Int) throws -> Data? {
        guard count <= Int64(limit) else { return nil }
        if case .data(let data) = source { return data }
        return try read(from: 0, maximumLength: Int(count))
    }
}
