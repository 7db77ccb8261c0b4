import CCourierZlib

/// One-shot zlib compression for the `/gzip` and `/deflate` routes.
enum Compression {
    /// The container around the deflate stream.
    enum Format {
        /// RFC 1952, what `Content-Encoding: gzip` means.
        case gzip
        /// RFC 1950, what `Content-Encoding: deflate` means in practice (and what httpbin sends).
        case zlib

        var windowBits: Int32 { self == .gzip ? 15 + 16 : 15 }
    }

    /// Prepares `stream` to deflate into `format` at `level`; `false` if zlib refuses.
    private static func start(_ stream: inout z_stream, format: Format, level: Int32) -> Bool {
        deflateInit2_(
            &stream,
            level,
            Z_DEFLATED,
            format.windowBits,
            8,
            Z_DEFAULT_STRATEGY,
            ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size)
        ) == Z_OK
    }

    /// Compresses `input` whole, or returns `nil` if zlib reports an error (it does not for valid input).
    static func compress(_ input: [UInt8], format: Format) -> [UInt8]? {
        var stream = z_stream()
        guard start(&stream, format: format, level: Z_DEFAULT_COMPRESSION) else { return nil }
        defer { deflateEnd(&stream) }

        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        var input = input
        let result = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(outputBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }
}

extension Compression {
    /// `count` zero bytes compressed as `format`, made a megabyte at a time so that a body which
    /// inflates to gigabytes (a "zip bomb", for testing a client's limits) never exists inflated.
    static func compressedZeros(count: Int, format: Format) -> [UInt8]? {
        var stream = z_stream()
        guard start(&stream, format: format, level: Z_BEST_SPEED) else { return nil }
        defer { deflateEnd(&stream) }
        var zeros = [UInt8](repeating: 0, count: 1 << 20)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var output: [UInt8] = []
        var remaining = max(0, count)
        while true {
            let take = min(remaining, zeros.count)
            remaining -= take
            let flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH
            var result = Z_OK
            zeros.withUnsafeMutableBufferPointer { input in
                stream.next_in = input.baseAddress
                stream.avail_in = uInt(take)
                repeat {
                    chunk.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        result = deflate(&stream, flush)
                        output.append(contentsOf: out.prefix(out.count - Int(stream.avail_out)))
                    }
                } while stream.avail_out == 0
            }
            if result == Z_STREAM_ERROR { return nil }
            if flush == Z_FINISH { return result == Z_STREAM_END ? output : nil }
        }
    }
}

extension Compression {
    /// Why a body could not be inflated.
    enum InflateFailure: Error, Equatable {
        /// The bytes are not a complete zlib, gzip or raw deflate stream.
        case malformed
        /// The body inflates to more than the limit (a decompression bomb, or just too large).
        case tooLarge
    }

    /// `input` inflated, as the container it turns out to be: zlib or gzip (told apart by their
    /// headers), else raw deflate, which some clients send for `Content-Encoding: deflate`.
    /// Stops at `limit` bytes of output, so a small body cannot make the server allocate gigabytes.
    static func inflate(_ input: [UInt8], limit: Int) -> Result<[UInt8], InflateFailure> {
        let detected = inflate(input, windowBits: 15 + 32, limit: limit)
        if case .failure(.malformed) = detected { return inflate(input, windowBits: -15, limit: limit) }
        return detected
    }

    private static func inflate(_ input: [UInt8], windowBits: Int32, limit: Int) -> Result<[UInt8], InflateFailure> {
        var stream = z_stream()
        guard inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return .failure(.malformed)
        }
        defer { inflateEnd(&stream) }
        var input = input
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var result = Z_OK
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    result = CCourierZlib.inflate(&stream, Z_NO_FLUSH)
                    output.append(contentsOf: out.prefix(out.count - Int(stream.avail_out)))
                }
            } while result == Z_OK && output.count <= limit
        }
        if output.count > limit { return .failure(.tooLarge) }
        // Anything but a finished stream that used all the input (trailing garbage included) is malformed.
        guard result == Z_STREAM_END, stream.avail_in == 0 else { return .failure(.malformed) }
        return .success(output)
    }
}
