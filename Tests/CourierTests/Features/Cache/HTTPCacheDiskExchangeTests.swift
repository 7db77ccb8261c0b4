import CourierTestServer
import CourierTestSupport
import Foundation
import NIOPosix
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A disk store's files are read and written off the transport's threads: on each exchange's own
/// queue, with the network suspended while that queue is behind.
@Suite struct HTTPCacheDiskExchangeTests {
    @Test(arguments: TransportKind.allCases)
    func theDiskStoreIsNeverCalledOnAnEventLoop(transport: TransportKind) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-io-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = ThreadRecordingStore(base: try HTTPCacheDiskStore(directory: directory, byteLimit: 1 << 20))
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.httpCache = HTTPCache(store: store) }
            let key = "io-\(transport.rawValue)"
            let fresh = server.url("/cached/\(key)-fresh?cache-control=max-age%3D60")
            let revalidated = server.url("/cached/\(key)-etag?cache-control=no-cache&etag=v1")
            // A miss stores (a writer, its chunks, its commit); a hit looks up; a 304 merges.
            _ = try await session.request(fresh).validate().serializingData().value
            _ = try await session.request(fresh).validate().serializingData().value
            _ = try await session.request(revalidated).validate().serializingData().value
            _ = try await session.request(revalidated).validate().serializingData().value
            // A redirect's next hop is made where the last one ended: an event loop, over
            // AsyncHTTPClient. Its lookup still runs on the exchange's queue.
            let target = fresh.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            _ = try await session.request(server.url("/redirect-to?url=\(target)")).validate().serializingData().value
            // A POST removes the stored entry.
            _ = try await session.request(fresh, method: .post).serializingData().value
            #expect(server.attempts(forKey: "\(key)-fresh") == 2, "stored, served, then posted to")
            #expect(server.attempts(forKey: "\(key)-etag") == 2, "stored, then revalidated")
            await session.invalidate()
        }
        let calls = store.calls
        #expect(calls.contains("makeWriter") && calls.contains("write") && calls.contains("commit"))
        #expect(calls.contains("entry") && calls.contains("updateEntry") && calls.contains("removeEntry"))
        #expect(store.callsOnEventLoops.isEmpty, "made on an event loop: \(store.callsOnEventLoops)")
    }

    @Test func aQueueBehindSuspendsTheNetworkUntilItCatchesUp() async throws {
        let fixture = try DiskExchange("held")
        defer { fixture.remove() }
        let (exchange, queue, handler, url) = (fixture.exchange, fixture.queue, fixture.handler, fixture.url)
        let network = RecordingNetworkTask()
        exchange.configure(plan: .network(revalidating: nil), network: { _ in network })
        exchange.resume()
        #expect(network.resumes == 1)

        // The disk stalls: nothing queued is handled.
        queue.suspend()
        exchange.transportTask(
            network,
            didReceive: ResponseHead(
                url: url,
                statusCode: 200,
                httpVersion: "HTTP/1.1",
                headerFields: [(name: "Cache-Control", value: "max-age=60")]
            )
        )
        let chunk = Data(repeating: 7, count: 1 << 20)
        for _ in 0..<4 { exchange.transportTask(network, didReceive: chunk) }
        #expect(network.suspends == 0, "4 MiB queued: at the limit, not past it")
        exchange.transportTask(network, didReceive: chunk)
        #expect(network.suspends == 1, "past the limit: the network waits")
        exchange.transportTask(network, didReceive: chunk)
        #expect(network.suspends == 1, "suspended once")

        // Suspended by its caller meanwhile: the drained queue leaves the network suspended.
        exchange.suspend()
        queue.resume()
        let drained = await value(within: hangLimit) { await handler.waitForBytes(6 << 20) }
        #expect(drained == true)
        queue.sync {}
        #expect(network.resumes == 1, "the caller's suspension stands")
        exchange.resume()
        #expect(network.resumes == 2)

        exchange.transportTask(
            network,
            didCompleteWith: nil,
            metrics: RequestMetrics(startDate: Date(), endDate: Date())
        )
        let completed = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(completed == true)
        #expect(handler.received == Data(repeating: 7, count: 6 << 20), "every byte, in order")
        guard case .hit(let cached) = fixture.cache.lookup(fixture.request, now: Date()) else {
            Issue.record("the body was not stored")
            return
        }
        #expect(cached.body.count == 6 << 20)
    }

    /// Cancelled while the disk was behind: the network's completion (without an error: it had
    /// ended) still comes, but the chunks dropped for the cancel mean the body is not whole, and
    /// nothing is stored.
    @Test func aCancelWhileTheQueueIsBehindStoresNoTruncatedBody() async throws {
        let fixture = try DiskExchange("truncated")
        defer { fixture.remove() }
        let (exchange, queue, handler, url) = (fixture.exchange, fixture.queue, fixture.handler, fixture.url)
        let network = RecordingNetworkTask()
        exchange.configure(plan: .network(revalidating: nil), network: { _ in network })
        exchange.resume()
        exchange.transportTask(
            network,
            didReceive: ResponseHead(
                url: url,
                statusCode: 200,
                httpVersion: "HTTP/1.1",
                headerFields: [(name: "Cache-Control", value: "max-age=60")]
            )
        )
        exchange.transportTask(network, didReceive: Data(repeating: 1, count: 1_000))
        // The head and the first piece are handled (the entry's writer is open)...
        queue.sync {}
        // ...then the disk falls behind, and the network delivers the rest and ends.
        queue.suspend()
        exchange.transportTask(network, didReceive: Data(repeating: 2, count: 1_000))
        exchange.cancel()
        exchange.transportTask(
            network,
            didCompleteWith: nil,
            metrics: RequestMetrics(startDate: Date(), endDate: Date())
        )
        queue.resume()
        let completed = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(completed == true)
        #expect(handler.completionCode == .cancelled)
        queue.sync {}
        guard case .miss = fixture.cache.lookup(fixture.request, now: Date()) else {
            Issue.record("a body cut short by the cancel was stored")
            return
        }
    }

    @Test func aDrainedQueueResumesTheNetwork() async throws {
        let fixture = try DiskExchange("drained")
        defer { fixture.remove() }
        let (exchange, queue, url) = (fixture.exchange, fixture.queue, fixture.url)
        let network = RecordingNetworkTask()
        exchange.configure(plan: .network(revalidating: nil), network: { _ in network })
        exchange.resume()
        queue.suspend()
        exchange.transportTask(
            network,
            didReceive: ResponseHead(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [])
        )
        for _ in 0..<3 { exchange.transportTask(network, didReceive: Data(count: 1 << 20)) }
        // Runs on the queue after the third chunk is handled: 2 MiB still queued by then.
        let resumesAfterThird = TestLock(-1)
        queue.async { resumesAfterThird.withLock { $0 = network.resumes } }
        for _ in 0..<2 { exchange.transportTask(network, didReceive: Data(count: 1 << 20)) }
        #expect(network.suspends == 1)
        queue.resume()
        let resumed = await value(within: hangLimit) { await network.waitForResumes(2) }
        #expect(resumed == true, "the queue caught up: the network reads again")
        #expect(
            resumesAfterThird.withLock { $0 } == 1,
            "only the chunk that held the network, handled after the suspension, may resume it"
        )
        exchange.cancel()
    }

    @Test func aNetworkTaskMadeWhileTheLookupIsCancelledIsCancelledToo() async throws {
        let fixture = try DiskExchange("raced")
        defer { fixture.remove() }
        let (exchange, handler) = (fixture.exchange, fixture.handler)
        let network = RecordingNetworkTask()
        let configured = Mailbox<Bool>()
        exchange.prepareOnResume { exchange in
            // The caller cancels while the lookup makes the network task.
            let accepted = exchange.configure(
                plan: .network(revalidating: nil),
                network: { exchange in
                    exchange.cancel()
                    return network
                }
            )
            configured.put(accepted)
        }
        exchange.resume()
        let completed = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(completed == true)
        #expect(handler.completionCode == .cancelled)
        // The cancelled completion may be seen before the lookup has refused the task it made.
        #expect(await configured.value(at: 0) == false)
        #expect(network.cancels == 1, "never left unresumed")
        #expect(network.resumes == 0)
    }

    @Test func aCancelBeforeTheFirstResumeSkipsTheLookup() async throws {
        let fixture = try DiskExchange("skipped")
        defer { fixture.remove() }
        let (exchange, queue, handler) = (fixture.exchange, fixture.queue, fixture.handler)
        let lookedUp = TestLock(false)
        exchange.prepareOnResume { _ in lookedUp.withLock { $0 = true } }
        exchange.cancel()
        exchange.resume()
        let completed = await value(within: hangLimit) { await handler.waitForCompletion() }
        #expect(completed == true)
        #expect(handler.completionCode == .cancelled)
        queue.sync {}
        #expect(lookedUp.withLock { $0 } == false)
    }
}

/// An exchange over a disk cache in a new folder, with a handler that collects what it gets
/// and a queue the test may stall.
private struct DiskExchange {
    let directory: URL
    let cache: HTTPCache
    let url: URL
    let queue = DispatchQueue(label: "test.disk")
    let handler = CollectingHandler()
    let exchange: CacheExchangeTask

    var request: HTTPCacheRequest { HTTPCacheRequest(method: "GET", url: url, headers: [:], mode: .default) }

    init(_ path: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-\(path)-\(UUID().uuidString)"
        )
        cache = try HTTPCache.disk(directory: directory, byteLimit: 64 << 20)
        url = try #require(URL(string: "http://127.0.0.1:1/\(path)"))
        exchange = CacheExchangeTask(
            cache: cache,
            request: HTTPCacheRequest(method: "GET", url: url, headers: [:], mode: .default),
            handler: handler,
            queue: queue
        )
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A disk store that notes each call, and the calls made on an event loop.
private final class ThreadRecordingStore: HTTPCacheStore {
    private let base: HTTPCacheDiskStore
    private let recorded = TestLock((calls: [String](), onEventLoops: [String]()))

    init(base: HTTPCacheDiskStore) { self.base = base }

    var calls: [String] { recorded.withLock { $0.calls } }
    var callsOnEventLoops: [String] { recorded.withLock { $0.onEventLoops } }
    var performsIO: Bool { true }
    var totalBytes: Int64 { base.totalBytes }

    @Sendable private func note(_ call: String) {
        let onEventLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
        recorded.withLock { recorded in
            recorded.calls.append(call)
            if onEventLoop { recorded.onEventLoops.append(call) }
        }
    }

    func entry(forKey key: String) -> (entry: HTTPCacheEntry, body: HTTPCacheBody)? {
        note("entry")
        return base.entry(forKey: key)
    }

    func makeWriter(for entry: HTTPCacheEntry) -> HTTPCacheEntryWriter? {
        note("makeWriter")
        guard let writer = base.makeWriter(for: entry) else { return nil }
        let note = self.note
        return HTTPCacheEntryWriter(
            entry: entry,
            operations: .init(
                write: { chunk in
                    note("write")
                    writer.write(chunk)
                    return true
                },
                commit: { given, _ in
                    note("commit")
                    return writer.commit(statusCode: given.statusCode, responseHeaders: given.responseHeaders)
                },
                discard: {
                    note("discard")
                    writer.discard()
                }
            )
        )
    }

    func updateEntry(_ entry: HTTPCacheEntry, replacing previous: HTTPCacheEntry?) -> Bool {
        note("updateEntry")
        return base.updateEntry(entry, replacing: previous)
    }

    func removeEntry(forKey key: String, where condition: (@Sendable (HTTPCacheEntry) -> Bool)?) {
        note("removeEntry")
        base.removeEntry(forKey: key, where: condition)
    }

    func removeAll() { base.removeAll() }
}

/// A network task that counts its suspensions and resumptions.
private final class RecordingNetworkTask: TransportTask {
    private let counts = TestLock(
        (suspends: 0, resumes: 0, cancels: 0, waiters: [(Int, CheckedContinuation<Bool, Never>)]())
    )

    var suspends: Int { counts.withLock { $0.suspends } }
    var resumes: Int { counts.withLock { $0.resumes } }
    var cancels: Int { counts.withLock { $0.cancels } }

    func resume() {
        let ready = counts.withLock { counts -> [CheckedContinuation<Bool, Never>] in
            counts.resumes += 1
            let resumes = counts.resumes
            let ready = counts.waiters.filter { $0.0 <= resumes }.map(\.1)
            counts.waiters.removeAll { $0.0 <= resumes }
            return ready
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    func suspend() { counts.withLock { $0.suspends += 1 } }
    func cancel() { counts.withLock { $0.cancels += 1 } }

    /// Returns once `resume()` has been called `count` times.
    func waitForResumes(_ count: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let done = counts.withLock { counts -> Bool in
                if counts.resumes >= count { return true }
                counts.waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }
}

/// An attempt's stand-in: collects the body and signals its progress and completion.
private final class CollectingHandler: TransportEventHandler {
    private struct State {
        var received = Data()
        var completed = false
        var completionCode: URLError.Code?
        var byteWaiters: [(Int, CheckedContinuation<Bool, Never>)] = []
        var completionWaiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = TestLock(State())

    var received: Data { state.withLock { $0.received } }
    var completionCode: URLError.Code? { state.withLock { $0.completionCode } }

    func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse) {}
    func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {}
    func transportTask(_ task: any TransportTask, didSendBodyBytes totalBytesSent: Int64, of totalBytesExpected: Int64?)
    {}

    func transportTask(_ task: any TransportTask, didReceive data: Data) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.received.append(data)
            let count = state.received.count
            let ready = state.byteWaiters.filter { $0.0 <= count }.map(\.1)
            state.byteWaiters.removeAll { $0.0 <= count }
            return ready
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics) {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.completed = true
            state.completionCode = error?.code
            defer { state.completionWaiters = [] }
            return state.completionWaiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    func waitForBytes(_ count: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.received.count >= count { return true }
                state.byteWaiters.append((count, continuation))
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }

    func waitForCompletion() async -> Bool {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.completed { return true }
                state.completionWaiters.append(continuation)
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }
}
