import CourierTestSupport
import NIOCore
import Testing

@testable import CourierTestServer

@Suite struct ByteRangeTests {
    private func resolve(_ range: String?, ifRange: String? = nil, length: Int = 100) -> ByteRange {
        ByteRange.resolve(range: range, ifRange: ifRange, length: length, entityTag: "range100")
    }

    @Test func noRangeMeansWholeResource() {
        #expect(resolve(nil) == .full)
        #expect(resolve("items=0-5") == .full)
        #expect(resolve("bytes=0-1,5-6") == .full)
        #expect(resolve("bytes=-") == .full)
    }

    @Test func singleRangesResolve() {
        #expect(resolve("bytes=10-19") == .partial(first: 10, last: 19))
        #expect(resolve("bytes=90-") == .partial(first: 90, last: 99))
        #expect(resolve("bytes=-10") == .partial(first: 90, last: 99))
        #expect(resolve("bytes=-500") == .full)
        #expect(resolve("bytes=0-99") == .full)
    }

    @Test func unsatisfiableRanges() {
        #expect(resolve("bytes=100-") == .unsatisfiable)
        #expect(resolve("bytes=20-10") == .unsatisfiable)
        #expect(resolve("bytes=50-100") == .unsatisfiable)
    }

    @Test func ifRangeMustMatchTheEntityTag() {
        #expect(resolve("bytes=10-19", ifRange: "range100") == .partial(first: 10, last: 19))
        #expect(resolve("bytes=10-19", ifRange: "\"range100\"") == .partial(first: 10, last: 19))
        #expect(resolve("bytes=10-19", ifRange: "\"range99\"") == .full)
        #expect(resolve("bytes=10-19", ifRange: "Sat, 21 Nov 2026 10:00:00 GMT") == .full)
    }

    @Test func patternStreamCoversTheOffsetsInChunks() async {
        await cpuBound {
            var allocator = ByteBufferAllocator()
            let stream = ByteRange.patternStream(24...29, chunkSize: 4)
            var bytes: [UInt8] = []
            var chunks = 0
            while let chunk = stream.nextChunk(&allocator) {
                bytes += chunk.readableBytesView
                chunks += 1
            }
            #expect(String(decoding: bytes, as: UTF8.self) == "yzabcd")
            #expect(chunks == 2)
            #expect(stream.length == 6)
        }
    }
}
