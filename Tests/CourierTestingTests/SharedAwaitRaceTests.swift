import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Several tasks awaiting one `DataTask`, on the stub transport: whichever claims the
/// serializing, and whenever the others come (before the request finishes, while it is
/// serialized, or after), each gets the one response, and the serializer runs once.
@Suite struct SharedAwaitRaceTests {
    /// A `Data` serializer that counts its runs.
    private struct CountingSerializer: DataResponseSerializerProtocol {
        let runs: CallCounter

        func serialize(
            request: URLRequest?,
            response: HTTPURLResponse?,
            data: Data?,
            error: CourierError?
        ) throws
            -> Data
        {
            runs.increment()
            if let error { throw error }
            return data ?? Data()
        }
    }

    @Test func everyAwaiterOfOneTaskGetsTheOneResponseAndTheSerializerRunsOnce() async throws {
        let total = 1000
        let awaiters = 4
        let transport = StubTransport()
        transport.respond { request in
            let name = request.url?.lastPathComponent ?? ""
            return StubResponse.status(200).delay(.microseconds(Int64.random(in: 0...200))).body(name)
        }
        let session = Session(transport: transport)
        let runs = (0..<total).map { _ in CallCounter() }
        let answers = await value(within: hangLimit) {
            await withTaskGroup(of: (index: Int, bodies: [Data?]).self) { group in
                for index in 0..<total {
                    group.addTask {
                        let task = session.request("https://example.com/\(index)")
                            .serializingResponse(using: CountingSerializer(runs: runs[index]))
                        let bodies = await withTaskGroup(of: Data?.self) { awaiting in
                            for awaiter in 0..<awaiters {
                                awaiting.addTask {
                                    // Spread the awaiters over the request's life: some come
                                    // before it finishes, some after.
                                    for _ in 0..<(awaiter * Int.random(in: 0...3)) { await Task.yield() }
                                    return await task.response.value
                                }
                            }
                            var bodies: [Data?] = []
                            for await body in awaiting { bodies.append(body) }
                            return bodies
                        }
                        return (index, bodies)
                    }
                }
                var answers: [(index: Int, bodies: [Data?])] = []
                for await answer in group { answers.append(answer) }
                return answers
            }
        }
        let all = try #require(answers, "an awaiter never got its response")
        #expect(all.count == total)
        for (index, bodies) in all {
            #expect(bodies.count == awaiters)
            #expect(bodies.allSatisfy { $0 == Data("\(index)".utf8) }, "request \(index): \(bodies)")
            #expect(runs[index].value == 1, "request \(index)'s serializer ran \(runs[index].value) times")
        }
        await session.invalidate()
    }
}
