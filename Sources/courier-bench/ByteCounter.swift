import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Counts a response body's bytes as a raw URLSession data task delivers them: how URLSession's
/// users consume a stream on Linux, where FoundationNetworking has no `bytes(for:)`.
///
/// `@unchecked Sendable`: the mutable members sit behind `lock`.
final class ByteCounter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int64 = 0
    private var statusCode = 0
    private var continuation: CheckedContinuation<Int64, any Error>?

    /// Streams `url` through a session made from `configuration`, with a counter as its delegate.
    static func count(_ url: URL, configuration: URLSessionConfiguration) async throws -> Int64 {
        let counter = ByteCounter()
        let session = URLSession(configuration: configuration, delegate: counter, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            counter.lock.withLock { counter.continuation = continuation }
            session.dataTask(with: url).resume()
        }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        lock.withLock { statusCode = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { count += Int64(data.count) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, count, statusCode) = lock.withLock {
            defer { self.continuation = nil }
            return (self.continuation, self.count, self.statusCode)
        }
        if let error {
            continuation?.resume(throwing: error)
        } else if statusCode != 200 {
            continuation?.resume(throwing: BenchError("the stream answered \(statusCode)"))
        } else {
            continuation?.resume(returning: count)
        }
    }
}
