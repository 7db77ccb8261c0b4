import Foundation
import Testing

@testable import Courier

@Suite struct UUIDRandomTests {
    @Test func randomUUIDsAreVersionFourAndDistinct() {
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let id = UUID.makeRandom()
            // Version 4 in the high nibble of byte 6; variant 10 in the top bits of byte 8.
            #expect(id.uuid.6 >> 4 == 4)
            #expect(id.uuid.8 >> 6 == 0b10)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
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
