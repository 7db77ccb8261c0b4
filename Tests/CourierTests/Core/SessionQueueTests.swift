import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's `Session(rootQueue:requestQueue:serializationQueue:)`: where Courier builds,
/// adapts and serializes a session's requests.
@Suite struct SessionQueueTests {
    /// A queue that says its name to code running on it, or on a queue targeting it.
    private static func namedQueue(_ name: String) -> (DispatchQueue, DispatchSpecificKey<String>) {
        let queue = DispatchQueue(label: name)
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: name)
        return (queue, key)
    }

    /// Builds a request to `url`, noting which of `key`'s queues it ran on.
    struct RecordingConvertible: URLRequestConvertible {
        let url: URL
        let key: DispatchSpecificKey<String>
        let seen: TestLock<[String?]>

        func asURLRequest() throws -> URLRequest {
            seen.withLock { $0.append(DispatchQueue.getSpecific(key: key)) }
            return URLRequest(url: url)
        }
    }

    /// Serializes the body as its length, noting which of `key`'s queues it ran on.
    struct RecordingSerializer: ResponseSerializer {
        let key: DispatchSpecificKey<String>
        let seen: TestLock<[String?]>

        func serialize(
            request: URLRequest?,
            response: HTTPURLResponse?,
            data: Data?,
            error: CourierError?
        ) throws
            -> Int
        {
            seen.withLock { $0.append(DispatchQueue.getSpecific(key: key)) }
            return data?.count ?? 0
        }
    }

    @Test(arguments: TransportKind.allCases)
    func requestAndSerializationQueuesAreUsed(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (requestQueue, requestKey) = Self.namedQueue("request")
            let (serializationQueue, serializationKey) = Self.namedQueue("serialization")
            let session = Session(
                transport: transport.makeTransport(),
                requestQueue: requestQueue,
                serializationQueue: serializationQueue,
                interceptor: .retryPolicy(exponentialBackoffScale: 0.01)
            )
            let built = TestLock<[String?]>([])
            let serialized = TestLock<[String?]>([])
            let key = UUID().uuidString
            let convertible = RecordingConvertible(
                url: server.url("/fault/flaky/\(key)?times=1&status=503"),
                key: requestKey,
                seen: built
            )
            let serializer = RecordingSerializer(key: serializationKey, seen: serialized)
            let length = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                    session.request(convertible).validate().response(responseSerializer: serializer) {
                        continuation.resume(returning: $0.value)
                    }
                }
            }
            #expect(((length ?? nil) ?? 0) > 0)
            #expect(built.withLock { $0 } == ["request", "request"], "both attempts built on the request queue")
            #expect(serialized.withLock { $0 } == ["serialization"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRootQueueIsWhatTheOthersTarget(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let (rootQueue, rootKey) = Self.namedQueue("root")
            let session = Session(transport: transport.makeTransport(), rootQueue: rootQueue)
            #expect(session.rootQueue === rootQueue)
            let built = TestLock<[String?]>([])
            let serialized = TestLock<[String?]>([])
            let convertible = RecordingConvertible(url: server.url("/get"), key: rootKey, seen: built)
            let serializer = RecordingSerializer(key: rootKey, seen: serialized)
            let length = await value(within: hangLimit) {
                await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                    session.request(convertible).response(responseSerializer: serializer) {
                        continuation.resume(returning: $0.value)
                    }
                }
            }
            #expect(((length ?? nil) ?? 0) > 0)
            #expect(built.withLock { $0 } == ["root"])
            #expect(serialized.withLock { $0 } == ["root"])
            await session.invalidate()
        }
    }

    @Test func withoutQueuesTheFirstAttemptIsBuiltWhereItIsResumed() async throws {
        let session = Session(transport: URLSessionTransport())
        #expect(session.rootQueue == nil)
        #expect(session.requestQueue == nil)
        await session.invalidate()
    }
}
