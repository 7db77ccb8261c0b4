import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redirects on the stub transport: `https` URLs without a TLS server, and cancels racing the
/// hops and the handler's decision, thousands of times.
@Suite struct RedirectRaceTests {
    /// Follows or declines after a suspension point, as the request's index says.
    private struct AskingHandler: RedirectHandler {
        let follows: Bool

        func request(
            _ request: Request,
            willBeRedirectedTo redirectRequest: URLRequest,
            for response: HTTPURLResponse
        ) async -> URLRequest? {
            await Task.yield()
            return follows ? redirectRequest : nil
        }
    }

    @Test func aDowngradeFromHTTPSIsRefusedUnlessAllowed() async throws {
        let transport = StubTransport()
        transport.stub(.status(302, headers: ["Location": "http://example.com/plain"])) {
            $0.url?.scheme == "https"
        }
        transport.stub(.status(200, body: Data("plain".utf8))) { $0.url?.scheme == "http" }
        let session = Session(transport: transport)
        let refused = await session.request("https://example.com/secure").serializingData().response
        #expect(refused.error?.kind == .redirectFailed)
        #expect(refused.error?.redirectFailureReason == .insecureRedirect(url: "http://example.com/plain"))
        #expect(transport.requests.count == 1, "nothing was sent in the clear")
        let allowed = await session.request("https://example.com/secure").redirect(allowingInsecureRedirects: true)
            .serializingData().response
        #expect(allowed.value == Data("plain".utf8))
        let permissive = Session(configuration: .init { $0.allowsInsecureRedirects = true }, transport: transport)
        let followed = await permissive.request("https://example.com/secure").serializingData().response
        #expect(followed.value == Data("plain".utf8))
        await session.invalidate()
    }

    /// What one request reported.
    private struct Outcome: Sendable {
        let index: Int
        let error: CourierError?
        let status: Int?
        let data: Data?
        let redirects: Int
    }

    @Test func everyRequestEndsOnceWhenCancelRacesItsRedirects() async throws {
        let total = 2000
        let transport = StubTransport()
        transport.respond { request in
            guard let url = request.url, let index = Int(url.pathComponents.dropFirst().first ?? "") else { return nil }
            if url.lastPathComponent == "next" {
                return StubResponse.status(200).body("\(index)-").delay(.microseconds(Int64.random(in: 0...100)))
                    .body("end")
            }
            return StubResponse.status(302, headers: ["Location": "/\(index)/next"]).body("redirect-")
                .delay(.microseconds(Int64.random(in: 0...100))).body("\(index)")
        }
        let session = Session(transport: transport)
        let outcomes = await value(within: 120) {
            await withTaskGroup(of: Outcome.self) { group in
                for index in 0..<total {
                    group.addTask { await Self.run(index, session: session) }
                }
                var outcomes: [Outcome] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
        }
        let all = try #require(outcomes, "a request never answered")
        #expect(all.count == total)
        var cancelled = 0
        for outcome in all {
            if outcome.error?.isExplicitlyCancelledError == true {
                cancelled += 1
                continue
            }
            #expect(outcome.error == nil, "request \(outcome.index): \(String(describing: outcome.error))")
            if outcome.index % 3 == 2 {
                // Declined: the 302, with its whole body.
                #expect(outcome.status == 302)
                #expect(outcome.data == Data("redirect-\(outcome.index)".utf8))
                #expect(outcome.redirects == 0)
            } else {
                #expect(outcome.status == 200)
                #expect(outcome.data == Data("\(outcome.index)-end".utf8))
                #expect(outcome.redirects == 1)
            }
        }
        // Cancels land at random: some before the end, some after.
        #expect(cancelled > 0 && cancelled < total)
        await session.invalidate()
    }

    /// Runs request `index` (followed without asking, followed by an asking handler, or
    /// declined by it) and cancels it at a random moment for half of them.
    private static func run(_ index: Int, session: Session) async -> Outcome {
        let request = session.request("https://example.com/\(index)")
        switch index % 3 {
        case 1: request.redirect(using: AskingHandler(follows: true))
        case 2: request.redirect(using: AskingHandler(follows: false))
        default: break
        }
        let calls = CallCount()
        let response: DataResponse<Data, CourierError> = await withCheckedContinuation { continuation in
            request.responseData { response in
                if calls.increment() == 1 { continuation.resume(returning: response) }
            }
            if index.isMultiple(of: 2) {
                DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...400))) {
                    request.cancel()
                }
            }
        }
        #expect(calls.value == 1)
        return Outcome(
            index: index,
            error: response.error,
            status: response.head?.statusCode,
            data: response.data,
            redirects: request.redirects.count
        )
    }
}

/// Counts calls from any thread.
private final class CallCount: Sendable {
    private let count = TestLock(0)

    /// Counts one more call and returns the count.
    func increment() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }

    var value: Int { count.withLock { $0 } }
}
