import Foundation
import Testing

@testable import CourierTestServer

@Suite struct RecordsRouteTests {
    private struct Record: Decodable {
        let id: Int
        let name: String
        let email: String
        let score: Double
        let active: Bool
        let tags: [String]
        let bio: String
    }

    @Test func answersAnArrayOfDecodableRecords() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await Exchange.make(server.baseURL, "/records/160")
            #expect(answer.status == 200)
            #expect(answer.headers["Content-Type"] == ["application/json"])
            let records = try JSONDecoder().decode([Record].self, from: Data(answer.body))
            #expect(records.count == 160)
            #expect(records.map(\.id) == Array(1...160))
            let sixth = try #require(records.dropFirst(5).first)
            #expect(sixth.name == "Record 6" && sixth.email == "user6@example.com" && sixth.score == 3)
            #expect(sixth.active && sixth.tags == ["alpha", "beta"] && sixth.bio.hasPrefix("Record 6 keeps"))
            // The benchmark's decode workload asks for 160 records to get about 64 KiB.
            #expect((60_000...70_000).contains(answer.body.count))
            // The same bytes every time (the second answer comes from the route's cache).
            #expect(try await Exchange.make(server.baseURL, "/records/160").body == answer.body)
        }
    }

    @Test func boundsTheCountAndRejectsGarbage() async throws {
        try await TestServer.withRunningServer { server in
            #expect(try await Exchange.make(server.baseURL, "/records/0").body == Array("[]".utf8))
            #expect(try await Exchange.make(server.baseURL, "/records/many").status == 404)
            #expect(try await Exchange.make(server.baseURL, "/records/-3").status == 404)
            let capped = try await Exchange.make(server.baseURL, "/records/999999999")
            // Only the tail is read: decoding 10 MiB in a debug build would starve other tests.
            let tail = String(decoding: capped.body.suffix(600), as: UTF8.self)
            #expect(tail.contains(#"{"id":\#(RecordsRoute.largestCount),"#))
            #expect(tail.hasSuffix("}]"))
        }
    }
}
