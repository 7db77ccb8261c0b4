import NIOCore
import NIOHTTP1

/// `/records/:n`: a compact JSON array of `n` (at most ``largestCount``) records, the same bytes
/// for the same `n`, for decoding tests and the benchmark's `decode` workload. Each record is
/// about 100 bytes:
///
/// ```json
/// {"id":7,"name":"Record 7","email":"user7@example.com","score":3.5,"active":false,"tags":["alpha","beta"]}
/// ```
///
/// httpbin has nothing like it: its JSON documents are fixed and small.
enum RecordsRoute {
    /// The most records one response holds (about 10 MiB).
    static let largestCount = 100_000

    static var routes: [Route] {
        [
            Route("/records/:n") { request, _ in
                guard let count = request.integerParameter("n"), count >= 0 else { return RedirectRoutes.notFound }
                return .respond(
                    ServerResponse(
                        status: .ok,
                        headers: [("Content-Type", "application/json")],
                        body: .bytes(body(count: min(count, largestCount)))
                    )
                )
            }
        ]
    }

    /// The array's bytes, written directly: building a `JSONValue` first would make the server,
    /// not the client, the bottleneck of a decoding benchmark.
    static func body(count: Int) -> [UInt8] {
        var text = "["
        text.reserveCapacity(count * 112 + 2)
        for id in stride(from: 1, through: count, by: 1) {
            if id > 1 { text += "," }
            let score = Double(id % 40) / 2
            let active = id % 3 == 0 ? "true" : "false"
            let tags = id % 2 == 0 ? #"["alpha","beta"]"# : #"["gamma"]"#
            text += #"{"id":\#(id),"name":"Record \#(id)","email":"user\#(id)@example.com","#
            text += #""score":\#(score),"active":\#(active),"tags":\#(tags)}"#
        }
        text += "]"
        return Array(text.utf8)
    }
}
