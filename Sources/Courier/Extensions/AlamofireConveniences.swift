import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Small conveniences with Alamofire's names, so that code moving over keeps compiling.

extension Request {
    /// A progress handler: `uploadProgress(queue:_:)` and `downloadProgress(queue:_:)` take one.
    public typealias ProgressHandler = @Sendable (Progress) -> Void
    /// What a custom validation returns: `.success(())`, or `.failure` with your error.
    public typealias ValidationResult = Result<Void, any Error>

    /// The metrics of the first attempt, or `nil` before one has finished.
    public var firstMetrics: RequestMetrics? { allMetrics.first }
    /// The metrics of the latest attempt, or `nil` before one has finished.
    public var lastMetrics: RequestMetrics? { allMetrics.last }
}

extension Session {
    /// A last change to a request's `URLRequest` before it is adapted: the `requestModifier:`
    /// parameter.
    public typealias RequestModifier = @Sendable (inout URLRequest) throws -> Void
}

extension DataTask {
    /// Starts the request, if it was not started: as ``Request/resume()``.
    public func resume() { request.resume() }
    /// Pauses the request: as ``Request/suspend()``.
    public func suspend() { request.suspend() }
}

extension DownloadTask {
    /// Starts the download, if it was not started: as ``Request/resume()``.
    public func resume() { request.resume() }
    /// Pauses the download: as ``Request/suspend()``.
    public func suspend() { request.suspend() }
}

extension DataStreamRequest.Stream {
    /// The value or failure of a `.stream` event; `nil` for the completion.
    public var result: Result<Success, Failure>? {
        guard case .stream(let result) = event else { return nil }
        return result
    }

    /// The value of a successful `.stream` event; `nil` otherwise.
    public var value: Success? {
        guard case .success(let value) = result else { return nil }
        return value
    }

    /// The failure of a `.stream` event; `nil` otherwise (the request's own error is in
    /// ``completion``).
    public var error: Failure? {
        guard case .failure(let error) = result else { return nil }
        return error
    }

    /// The completion, for the last event; `nil` for a `.stream` event.
    public var completion: DataStreamRequest.Completion? {
        guard case .complete(let completion) = event else { return nil }
        return completion
    }
}

extension HTTPURLResponse {
    /// The response's header fields as ``HTTPHeaders``.
    public var headers: HTTPHeaders {
        HTTPHeaders((allHeaderFields as? [String: String]) ?? [:])
    }
}

extension CourierError {
    /// The URL that could not be used, for an invalid URL; `nil` otherwise. Alamofire's `url`.
    public var url: String? { invalidURLString }

    /// The content types that were acceptable, for a content-type validation failure.
    public var acceptableContentTypes: [String]? {
        switch validationFailureReason {
        case .unacceptableContentType(let acceptable, _), .missingContentType(let acceptable): return acceptable
        default: return nil
        }
    }

    /// The response's content type, for an unacceptable one.
    public var responseContentType: String? {
        guard case .unacceptableContentType(_, let actual)? = validationFailureReason else { return nil }
        return actual
    }

    /// The encoding a body could not be read as, for a string serialization failure.
    public var failedStringEncoding: String.Encoding? {
        guard case .stringSerializationFailed(let encoding)? = serializationFailureReason else { return nil }
        return encoding
    }
}
