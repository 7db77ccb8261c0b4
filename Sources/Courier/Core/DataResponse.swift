import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a finished ``DataRequest`` produced for one response handler: the request and
/// response, the body, the metrics, and the serialized ``result``.
public struct DataResponse<Success: Sendable, Failure: Error>: Sendable {
    /// The last URLRequest sent, or `nil` if none could be built; built when read where Courier
    /// sent its parts (see ``RequestHead``).
    public var request: URLRequest? { reported?.urlRequest }
    /// The last request's method, URL and headers, or `nil` if none could be built: cheaper
    /// than ``request`` on Linux.
    public var requestHead: RequestHead? { reported?.head }
    private let reported: ReportedRequest?
    /// The last response head, or `nil` if none arrived; built on first use where the transport
    /// gave only its parts (see ``ResponseHead``).
    public var response: HTTPURLResponse? { head?.httpURLResponse }
    /// The last response head's status and headers, or `nil` if none arrived: cheaper than
    /// ``response`` on Linux.
    public let head: ResponseHead?
    /// The response body, or `nil` if none arrived.
    public let data: Data?
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
        data: Data?,
        metrics: RequestMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.init(
            request: request,
            head: response.map(ResponseHead.init),
            data: data,
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: result
        )
    }

    /// Creates a response around a head, whose `HTTPURLResponse` is then built only if read.
    public init(
        request: URLRequest?,
        head: ResponseHead?,
        data: Data?,
        metrics: RequestMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.init(
            reported: ReportedRequest(request),
            head: head,
            data: data,
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: result
        )
    }

    /// A response for the request Courier sent as `requestHead`.
    init(
        requestHead: RequestHead?,
        head: ResponseHead?,
        data: Data?,
        metrics: RequestMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.init(
            reported: ReportedRequest(requestHead),
            head: head,
            data: data,
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: result
        )
    }

    private init(
        reported: ReportedRequest?,
        head: ResponseHead?,
        data: Data?,
        metrics: RequestMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.reported = reported
        self.head = head
        self.data = data
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// This response with `result` in place of its own: what the transforms
    /// (``map(_:)``, ``mapError(_:)``…) build.
    func replacingResult<NewSuccess, NewFailure>(
        _ result: Result<NewSuccess, NewFailure>
    ) -> DataResponse<NewSuccess, NewFailure> {
        DataResponse<NewSuccess, NewFailure>(
            reported: reported,
            head: head,
            data: data,
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: result
        )
    }

    /// The value, on success.
    public var value: Success? { try? result.get() }

    /// The error, on failure.
    public var error: Failure? {
        guard case .failure(let error) = result else { return nil }
        return error
    }
}

extension DataResponse: CustomStringConvertible {
    /// The outcome and status, e.g. `success (200, 312 bytes)`.
    public var description: String {
        let status = head.map { "\($0.statusCode)" } ?? "no response"
        let size = data.map { "\($0.count) bytes" } ?? "no body"
        switch result {
        case .success: return "success (\(status), \(size))"
        case .failure(let error): return "failure (\(status), \(size)): \(error)"
        }
    }
}
