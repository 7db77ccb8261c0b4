import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// `/records/:n`: a compact JSON array of `n` (at most ``largestCount``) records, the same bytes
/// for the same `n`, for decoding tests and the benchmark's `decode` workload (160 records, about
/// 64 KiB). Each record is about 400 bytes, most of it a text field, as API payloads go:
///
/// ```json
/// {"id":7,"name":"Record 7","email":"user7@example.com","score":3.5,"active":false,"tags":["alpha","beta"],"bio":"Record 7 …"}
/// ```
///
/// httpbin has nothing like it: its JSON documents are fixed and small.
enum RecordsRoute {
    /// The most records one response holds (about 8 MiB).
    static let largestCount = 20_000

    static var routes: [Route] {
        [
            Route("/records/:n") { request, _ in
                guard let count = request.integerParameter("n"), count >= 0 else { return RedirectRoutes.notFound }
                return .respond(
                    ServerResponse(
                        status: .ok,
                        headers: [("Content-Type", "application/json")],
                        body: .bytes(cachedBody(count: min(count, largestCount)))
                    )
                )
            }
        ]
    }

    /// The bodies made so far, by count (at most ``cacheLimit`` of them): the same `n` is asked for
    /// over and over by a benchmark, which must measure the client, not this route.
    private static let cache = NIOLockedValueBox<[Int: [UInt8]]>([:])
    private static let cacheLimit = 8

    static func cachedBody(count: Int) -> [UInt8] {
        if let body = cache.withLockedValue({ $0[count] }) { return body }
        let body = body(count: count)
        cache.withLockedValue { cache in
            if cache.count >= cacheLimit, let evicted = cache.keys.first { cache[evicted] = nil }
            cache[count] = body
        }
        return body
    }

    /// The bulk of each record: plain prose, nothing to escape.
    private static let bio = Array(
        repeating: "keeps a short account of what it was asked, when, and by whom, for later.",
        count: 4
    ).joined(separator: " ")

    /// The array's bytes, written directly: building a `JSONValue` first would make the server,
    /// not the client, the bottleneck of a decoding benchmark.
    static func body(count: Int) -> [UInt8] {
        var text = "["
        text.reserveCapacity(count * (bio.utf8.count + 128) + 2)
        for id in stride(from: 1, through: count, by: 1) {
            if id > 1 { text += "," }
            let score = Double(id % 40) / 2
            let active = id % 3 == 0 ? "true" : "false"
            let tags = id % 2 == 0 ? #"["alpha","beta"]"# : #"["gamma"]"#
            text += #"{"id":\#(id),"name":"Record \#(id)","email":"user\#(id)@example.com","#
            text += #""score":\#(score),"active":\#(active),"tags":\#(tags),"bio":"Record \#(id) \#(bio)"}"#
        }
        text += "]"
        return Array(text.utf8)
    }
}
