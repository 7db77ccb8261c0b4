import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a finished ``DownloadRequest`` produced for one response handler: the request and
/// response, where the file is, resume data if it was interrupted, the metrics, and the
/// serialized ``result``.
public struct DownloadResponse<Success: Sendable, Failure: Error>: Sendable {
    /// The last URLRequest sent, or `nil` if none could be built.
    public let request: URLRequest?
    /// The last response head, or `nil` if none arrived; built on first use where the transport
    /// gave only its parts (see ``ResponseHead``).
    public var response: HTTPURLResponse? { head?.httpURLResponse }
    /// The last response head's status and headers, or `nil` if none arrived: cheaper than
    /// ``response`` on Linux.
    public let head: ResponseHead?
    /// The downloaded file at its destination, on success.
    public let fileURL: URL?
    /// Data to continue the download with, when it was interrupted (see ``DownloadResumeData``).
    public let resumeData: Data?
    /// The metrics of the last attempt.
    public let metrics: RequestMetrics?
    /// Seconds the serializer took.
    public let serializationDuration: TimeInterval
    /// The serialized value, or why there is none.
    public let result: Result<Success, Failure>

    /// Creates a response; serializers and tests build these.
    public init(
        request: URLRequest?,
        response: HTTPURLResponse?,
        fileURL: URL?,
        resumeData: Data?,
        metrics: RequestMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.init(
            request: request,
            head: response.map(ResponseHead.init),
            fileURL: fileURL,
            resumeData: resumeData,
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: result
        )
    }

    /// Creates a response around a head, whose `HTTPURLResponse` is then built only if read.
    public init(
        request: URLRequest?,
        head: ResponseHead?,
        fileURL: URL?,
        resumeData: Data?,
        metrics: RequestMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.request = request
        self.head = head
        self.fileURL = fileURL
        self.resumeData = resumeData
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// The value, on success.
    public var value: Success? { try? result.get() }

    /// The error, on failure.
    public var error: Failure? {
        guard case .failure(let error) = result else { return nil }
        return error
    }
}

extension DownloadResponse: CustomStringConvertible {
    /// The outcome, status and file, e.g. `success (200, /tmp/file.zip)`.
    public var description: String {
        let status = head.map { "\($0.statusCode)" } ?? "no response"
        let file = fileURL?.path ?? "no file"
        switch result {
        case .success: return "success (\(status), \(file))"
        case .failure(let error): return "failure (\(status), \(file)): \(error)"
        }
    }
}
