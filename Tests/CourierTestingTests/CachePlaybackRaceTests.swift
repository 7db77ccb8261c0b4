import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// Stored responses played by Courier's cache under cancels and suspend/resume races, on the
/// stub transport: each request ends once, with the whole body in order or the cancellation.
@Suite struct CachePlaybackRaceTests {
    @Test func playbackUnderCancelAndSuspendRacesDeliversTheBodyOnceInOrder() async throws {
        let body = Data((0..<(300 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        let transport = StubTransport()
        transport.stub(.status(200, headers: ["Cache-Control": "max-age=600"], body: body))
        let session = Session(configuration: .init { $0.httpCache = .memory(byteLimit: 8 << 20) }, transport: transport)
        let primed = await session.request("https://example.com/stored").serializingData().response
        #expect(primed.value == body)
        let total = 400
        let outcomes = await value(within: 120) {
            await withTaskGroup(of: (Int, DataResponse<Data, CourierError>, ResponseSource?).self) { group in
                for index in 0..<total {
                    group.addTask {
                        let request = session.request("https://example.com/stored")
                        let jitter = { DispatchTime.now() + .microseconds(Int.random(in: 0...600)) }
                        if index % 2 == 0 {
                            DispatchQueue.global().asyncAfter(deadline: jitter()) { request.cancel() }
                        }
                        if index % 3 == 0 {
                            // Toggled in one block, so that it ends resumed, racing the playback's
                            // steps on other threads.
                            DispatchQueue.global().asyncAfter(deadline: jitter()) {
                                for _ in 0..<4 {
                                    request.suspend()
                                    request.resume()
                                }
                            }
                        }
                        let response = await request.serializingData().response
                        return (index, response, request.metrics?.responseSource)
                    }
                }
                var outcomes: [(Int, DataResponse<Data, CourierError>, ResponseSource?)] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
        }
        let all = try #require(outcomes, "a request never ended")
        #expect(all.count == total)
        for (index, response, source) in all {
            if let error = response.error {
                #expect(error.isExplicitlyCancelledError, "request \(index): \(error)")
                #expect(index % 2 == 0, "only the requests cancelled fail")
            } else {
                #expect(response.value == body, "request \(index): the whole body, once, in order")
                #expect(source == .cache)
            }
        }
        #expect(transport.requests.count == 1, "the store answered every request after the first")
        await session.invalidate()
    }
}
