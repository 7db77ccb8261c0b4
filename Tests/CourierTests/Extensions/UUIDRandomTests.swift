import Foundation
import Testing

@testable import Courier

@Suite struct UUIDRandomTests {
    @Test func randomUUIDsAreVersionFourAndDistinct() {
        var seen = Set<UUID>()
        // Every byte position takes many values: none is left constant (an unfilled half would be).
        var valuesAt = [Set<UInt8>](repeating: [], count: 16)
        for _ in 0..<10_000 {
            let id = UUID.makeRandom()
            // Version 4 in the high nibble of byte 6; variant 10 in the top bits of byte 8.
            #expect(id.uuid.6 >> 4 == 4)
            #expect(id.uuid.8 >> 6 == 0b10)
            seen.insert(id)
            withUnsafeBytes(of: id.uuid) { bytes in
                for (position, byte) in bytes.enumerated() { valuesAt[position].insert(byte) }
            }
        }
        #expect(seen.count == 10_000)
        for (position, values) in valuesAt.enumerated() {
            // Bytes 6 and 8 keep 4 and 6 random bits; the others all 8.
            let expected = position == 6 ? 16 : position == 8 ? 64 : 256
            #expect(values.count == expected, "byte \(position)")
        }
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
