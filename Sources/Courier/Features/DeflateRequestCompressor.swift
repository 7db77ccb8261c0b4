internal import CCourierZlib
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An adapter that compresses a request's body with `deflate` and labels it
/// `Content-Encoding: deflate`, as Alamofire's `DeflateRequestCompressor` does.
///
/// Use it for large, compressible bodies (JSON or text of tens of kilobytes and up) sent to a
/// server that accepts compressed requests; many servers do not, so check yours first. Small
/// bodies and bodies that are compressed already (images, archives) only get slower: decide with
/// `shouldCompressBodyData`. The body is compressed when each attempt is adapted, on the task that
/// adapts it.
///
/// Only a body held in memory (`URLRequest.httpBody`, which `parameters:` and
/// ``JSONParameterEncoder`` produce) is compressed. Uploads from a file, a stream or a
/// ``RequestBody`` are sent as they are, as in Alamofire.
///
/// ```swift
/// let session = Session(interceptor: .deflateCompressor)
/// ```
///
/// The output is a zlib stream (RFC 1950), which is what servers read `deflate` as.
public struct DeflateRequestCompressor: RequestInterceptor {
    /// What to do with a request that already has a `Content-Encoding` header.
    public enum DuplicateHeaderBehavior: Sendable {
        /// Fail the request with ``DeflateRequestCompressor/DuplicateHeaderError``, wrapped in a
        /// `requestAdaptationFailed` ``CourierError``. The default, because compressing an encoded
        /// body again would make it unreadable.
        case error
        /// Compress the body anyway and replace the header with `deflate`.
        case replace
        /// Send the request as it is.
        case skip
    }

    /// The error when a request to compress already has a `Content-Encoding` header and
    /// ``duplicateHeaderBehavior`` is ``DuplicateHeaderBehavior/error``.
    public struct DuplicateHeaderError: Error, Sendable, Equatable {
        /// Creates the error.
        public init() {}
    }

    /// The error when zlib refuses to compress a body; `code` is zlib's return code.
    public struct CompressionError: Error, Sendable, Equatable {
        /// zlib's return code (`Z_MEM_ERROR` is -4, `Z_BUF_ERROR` is -5).
        public let code: Int32
    }

    /// What this compressor does with a request that already has a `Content-Encoding` header.
    public let duplicateHeaderBehavior: DuplicateHeaderBehavior

    /// Decides, from the body about to be sent, whether to compress it.
    public let shouldCompressBodyData: @Sendable (_ bodyData: Data) -> Bool

    /// Creates a compressor.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: What to do when the request already has a `Content-Encoding`
    ///     header; ``DuplicateHeaderBehavior/error`` by default.
    ///   - shouldCompressBodyData: Whether to compress a given body; every body by default. A
    ///     size threshold is the usual test: `{ $0.count >= 16_384 }`.
    public init(
        duplicateHeaderBehavior: DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) {
        self.duplicateHeaderBehavior = duplicateHeaderBehavior
        self.shouldCompressBodyData = shouldCompressBodyData
    }

    /// Compresses the request's `httpBody` and sets `Content-Encoding: deflate`, or returns the
    /// request unchanged when it has no body in memory or `shouldCompressBodyData` declines it.
    public func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
        guard let body = urlRequest.httpBody, shouldCompressBodyData(body) else { return urlRequest }
        if urlRequest.value(forHTTPHeaderField: "Content-Encoding") != nil {
            switch duplicateHeaderBehavior {
            case .error: throw DuplicateHeaderError()
            case .replace: break
            case .skip: return urlRequest
            }
        }
        var compressed = urlRequest
        compressed.httpBody = try Self.deflate(body)
        compressed.setValue("deflate", forHTTPHeaderField: "Content-Encoding")
        return compressed
    }

    /// `data` as one zlib stream, compressed at zlib's default level.
    static func deflate(_ data: Data) throws -> Data {
        var stream = z_stream()
        let started = deflateInit_(&stream, Z_DEFAULT_COMPRESSION, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard started == Z_OK else { throw CompressionError(code: started) }
        defer { deflateEnd(&stream) }

        // zlib counts in 32-bit `uInt`, so a body is fed a gigabyte at a time at most. The loops
        // follow zlib's own example (zpipe.c): drain while the output chunk comes back full; a
        // `Z_BUF_ERROR` there only means "no progress possible", and the next round gives input.
        let step = 1 << 30
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var result = Z_OK
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            var offset = 0
            repeat {
                let take = min(step, input.count - offset)
                let flush = offset + take == input.count ? Z_FINISH : Z_NO_FLUSH
                stream.next_in = UnsafeMutablePointer(
                    mutating: input.baseAddress?.advanced(by: offset).assumingMemoryBound(to: Bytef.self)
                )
                stream.avail_in = uInt(take)
                offset += take
                repeat {
                    chunk.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        result = CCourierZlib.deflate(&stream, flush)
                        output.append(UnsafeBufferPointer(rebasing: out.prefix(out.count - Int(stream.avail_out))))
                    }
                } while stream.avail_out == 0 && result != Z_STREAM_ERROR
            } while offset < input.count && result != Z_STREAM_ERROR
        }
        guard result == Z_STREAM_END else { throw CompressionError(code: result) }
        return output
    }
}

extension RequestInterceptor where Self == DeflateRequestCompressor {
    /// A ``DeflateRequestCompressor`` that compresses every in-memory body and refuses a request
    /// that already has a `Content-Encoding`: `interceptor: .deflateCompressor`.
    public static var deflateCompressor: DeflateRequestCompressor { DeflateRequestCompressor() }

    /// A ``DeflateRequestCompressor`` with the given settings:
    /// `.deflateCompressor(shouldCompressBodyData: { $0.count >= 16_384 })`.
    public static func deflateCompressor(
        duplicateHeaderBehavior: DeflateRequestCompressor.DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) -> DeflateRequestCompressor {
        DeflateRequestCompressor(
            duplicateHeaderBehavior: duplicateHeaderBehavior,
            shouldCompressBodyData: shouldCompressBodyData
        )
    }
}
