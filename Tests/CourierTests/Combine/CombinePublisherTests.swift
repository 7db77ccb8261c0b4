import CourierCombine
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's Combine publishers, from `CourierCombine` (OpenCombine on Linux), on both transports
/// against the embedded server.
@Suite struct CombinePublisherTests {
    private struct Slideshow: Decodable, Sendable {
        struct Show: Decodable, Sendable { let title: String }
        let slideshow: Show
    }

    /// The first value `publisher` sends, and whether it then finished, or `nil` after ``hangLimit``.
    private func first<P: Publisher>(
        of publisher: P
    ) async -> (value: P.Output, finished: Bool)? where P.Output: Sendable, P.Failure == Never {
        let box = Mailbox<P.Output>()
        let finished = Mailbox<Bool>()
        let subscription = publisher.sink(
            receiveCompletion: { _ in finished.put(true) },
            receiveValue: { box.put($0) }
        )
        defer { subscription.cancel() }
        guard let value = await box.value(at: 0), await finished.value(at: 0) == true else { return nil }
        return (value, true)
    }

    @Test(arguments: TransportKind.allCases)
    func dataPublishersSendOneResponseAndFinish(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let decoded = await first(of: session.request(server.url("/json")).publishDecodable(type: Slideshow.self))
            #expect(decoded?.value.value?.slideshow.title == "Sample Slide Show")
            let text = await first(of: session.request(server.url("/base64/Y29tYmluZQ==")).publishString())
            #expect(text?.value.value == "combine")
            let data = await first(of: session.request(server.url("/bytes/32")).publishData())
            #expect(data?.value.value?.count == 32)
            let raw = await first(of: session.request(server.url("/status/204")).publishUnserialized())
            #expect(raw?.value.response?.statusCode == 204)
            let result = await first(of: session.request(server.url("/status/500")).validate().publishData().result())
            #expect(result?.value.failure?.responseCode == 500)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func valueFailsWithTheCourierError(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let failure = Mailbox<CourierError>()
            let subscription = session.request(server.url("/status/404")).validate().publishData().value().sink(
                receiveCompletion: { completion in
                    if case .failure(let error) = completion { failure.put(error) }
                },
                receiveValue: { _ in }
            )
            #expect(await failure.value(at: 0)?.responseCode == 404)
            subscription.cancel()
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingTheSubscriptionCancelsTheRequest(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(server.url("/fault/hang?seconds=60"))
            let values = Mailbox<Bool>()
            let subscription = request.publishData().sink { _ in values.put(true) }
            try await server.waitForRequests(1)
            subscription.cancel()
            let result = await value(within: hangLimit) { await request.serializingData().result }
            #expect(result?.failure?.isExplicitlyCancelledError == true)
            #expect(values.count == 0)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadPublishersSendTheFile(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let data = await first(of: session.download(server.url("/bytes/64")).publishData())
            #expect(data?.value.value?.count == 64)
            let url = await first(of: session.download(server.url("/bytes/8")).publishURL())
            let file = try #require(url?.value.value)
            #expect((try? Data(contentsOf: file))?.count == 8)
            try? FileManager.default.removeItem(at: file)
            let decoded = await first(of: session.download(server.url("/json")).publishDecodable(type: Slideshow.self))
            #expect(decoded?.value.value?.slideshow.title == "Sample Slide Show")
            let raw = await first(of: session.download(server.url("/status/404")).publishUnserialized())
            #expect(raw?.value.response?.statusCode == 404)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamPublisherSendsEveryPieceThenTheEnd(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let pieces = Mailbox<Int>()
            let completions = Mailbox<Bool>()
            let subscription = session.streamRequest(server.url("/bytes/4096")).publishData().sink { stream in
                switch stream.event {
                case .stream(let result): pieces.put((try? result.get())?.count ?? -1)
                case .complete(let completion): completions.put(completion.error == nil)
                }
            }
            #expect(await completions.value(at: 0) == true)
            #expect(pieces.values.reduce(0, +) == 4096)
            subscription.cancel()
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamPublisherStartsARequestMadeNotToStartOnItsOwn(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.streamRequest(server.url("/bytes/100"), shouldAutomaticallyResume: false)
            let sizes = Mailbox<Int>()
            let finished = Mailbox<Bool>()
            let subscription = request.publishData().value().sink(
                receiveCompletion: { completion in
                    if case .finished = completion { finished.put(true) } else { finished.put(false) }
                },
                receiveValue: { sizes.put($0.count) }
            )
            #expect(await finished.value(at: 0) == true)
            #expect(sizes.values.reduce(0, +) == 100)
            subscription.cancel()
            await session.invalidate()
        }
    }

    /// A subscriber that asks for one piece, then for the rest when told to.
    private final class OneAtATime: Subscriber, @unchecked Sendable {  // `subscription` is set once, before any read.
        typealias Input = DataStreamRequest.Stream<Data, CourierError>
        typealias Failure = Never
        let pieces = Mailbox<Int>()
        let finished = Mailbox<Bool>()
        private var subscription: (any Subscription)?

        func receive(subscription: any Subscription) {
            self.subscription = subscription
            subscription.request(.max(1))
        }

        func receive(_ input: Input) -> Subscribers.Demand {
            if case .stream(let result) = input.event { pieces.put((try? result.get())?.count ?? -1) }
            return .none
        }

        func receive(completion: Subscribers.Completion<Never>) { finished.put(true) }

        func requestTheRest() { subscription?.request(.unlimited) }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamPublisherSendsNoMoreThanItsSubscriberAsks(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // Five bytes, dripped apart: several pieces on every transport.
            let request = session.streamRequest(server.url("/drip?numbytes=5&duration=0.2&delay=0"))
            let received = Mailbox<Int64>()
            request.downloadProgress { received.put($0.completedUnitCount) }
            let subscriber = OneAtATime()
            request.publishData().receive(subscriber: subscriber)
            // One piece (a byte, unless a loaded machine read two drips at once).
            #expect((await subscriber.pieces.value(at: 0) ?? 0) > 0)
            // Every byte has arrived, and waits: none goes to the subscriber, which asked for one.
            var index = 0
            while let count = await received.value(at: index), count < 5 { index += 1 }
            await withCheckedContinuation { continuation in
                DispatchQueue.courierCallbacks.async { continuation.resume() }
            }
            #expect(subscriber.pieces.count == 1)
            subscriber.requestTheRest()
            #expect(await subscriber.finished.value(at: 0) == true)
            #expect(subscriber.pieces.values.reduce(0, +) == 5)
            await session.invalidate()
        }
    }
}
