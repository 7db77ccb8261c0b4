import Foundation
import Testing

@testable import Courier

@Suite struct UUIDRandomTests {
    @Test func randomUUIDsAreVersionFourAndDistinct() {
        let ids = (0..<4_000).map { _ in UUID.makeRandom() }
        #expect(Set(ids).count == ids.count)
        // Version 4 in the high nibble of byte 6; variant 10 in the top bits of byte 8.
        #expect(ids.allSatisfy { $0.uuid.6 >> 4 == 4 && $0.uuid.8 >> 6 == 0b10 })
        // Every byte position takes many values: none is left constant, as an unfilled half
        // would be. Bytes 6 and 8 keep 4 and 6 random bits: in 4,000 draws all 16 and 64 values
        // show but with odds of about 10^-26. A full byte misses even one of its 256 values with
        // odds of about 4 in 100,000; the check allows 16.
        var valuesAt = [Set<UInt8>](repeating: [], count: 16)
        for id in ids {
            withUnsafeBytes(of: id.uuid) { bytes in
                for (position, byte) in bytes.enumerated() { valuesAt[position].insert(byte) }
            }
        }
        let counts = valuesAt.map(\.count)
        #expect(counts[6] == 16 && counts[8] == 64)
        #expect(counts.enumerated().allSatisfy { $0.offset == 6 || $0.offset == 8 || $0.element >= 240 }, "\(counts)")
        // The text form reads as a version-4 UUID: xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx.
        let text = UUID.makeRandom().uuidString
        let characters = Array(text)
        #expect(characters.count == 36)
        #expect(characters[14] == "4")
        #expect("89AB".contains(characters[19]))
    }

    @Test func requestsGetRandomIDs() async {
        let session = Session(configuration: .init { $0.startRequestsImmediately = false })
        let first = session.request("http://127.0.0.1:9/a")
        let second = session.request("http://127.0.0.1:9/a")
        #expect(first.id != second.id)
        #expect(first.id.uuid.6 >> 4 == 4)
        #expect(session.streamRequest("http://127.0.0.1:9/a").id.uuid.6 >> 4 == 4)
        await session.invalidate()
    }
}
