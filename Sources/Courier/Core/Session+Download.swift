import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    // MARK: - Downloading

    /// Downloads `url` to a file: the body streams to disk, then moves to `destination` once
    /// complete and valid (see ``DownloadRequest``).
    ///
    /// - Parameters:
    ///   - url: What to download.
    ///   - method: The method; `GET` by default.
    ///   - headers: Headers for this request; they win over the session's.
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest.
    ///   - destination: Where the file goes; `nil` leaves it at ``DownloadRequest/temporaryURL``.
    public func download(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(
            convertible(url, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            to: destination
        )
    }

    /// Downloads `url` with `parameters` encoded by `encoder` (into the query with the default
    /// encoder and `GET`), as Alamofire's.
    ///
    /// - Parameters:
    ///   - url: What to download.
    ///   - method: The method; `GET` by default.
    ///   - parameters: An `Encodable` value, such as `["q": "swift"]` or a struct.
    ///   - encoder: Where and how the parameters go.
    ///   - headers: Headers for this request; they win over the session's.
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest.
    ///   - destination: Where the file goes; `nil` leaves it at ``DownloadRequest/temporaryURL``.
    public func download<Parameters: Encodable & Sendable>(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(
            convertible(url, method: method, headers: headers, requestModifier: requestModifier) {
                try encoder.encode(parameters, into: $0)
            },
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            to: destination
        )
    }

    /// Downloads `url` with a ``Parameters`` dictionary encoded by `encoding`, as Alamofire's
    /// (chosen, as for `request`, for a `Parameters` value, a mixed literal, `nil`, or when
    /// `encoding:` is given).
    ///
    /// - Parameters:
    ///   - url: What to download.
    ///   - method: The method; `GET` by default.
    ///   - parameters: The parameters, or `nil`.
    ///   - encoding: How the parameters go in; ``URLEncoding/default`` (the query, for `GET`).
    ///   - headers: Headers for this request; they win over the session's.
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest.
    ///   - destination: Where the file goes; `nil` leaves it at ``DownloadRequest/temporaryURL``.
    @_disfavoredOverload
    public func download(
        _ url: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoding: any ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(
            convertible(url, method: method, headers: headers, requestModifier: requestModifier) {
                try encoding.encode($0, with: parameters)
            },
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            to: destination
        )
    }

    /// Downloads what `convertible` asks for to `destination`.
    public func download(
        _ convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        register(
            DownloadRequest(
                convertible: convertible,
                destination: destination,
                resumingFrom: nil,
                serializationQueue: serializationQueue,
                eventMonitor: requestEventMonitor,
                interceptor: interceptor,
                session: self
            ),
            automaticallyResuming: shouldAutomaticallyResume
        )
    }

    /// Continues an interrupted download from its ``DownloadRequest/resumeData``, asking the
    /// server for the rest only (`Range` and `If-Range`). If the file changed on the server, the
    /// download starts over. Works across processes while the partial file exists.
    ///
    /// Resume data that is not Courier's, of an unknown version, or whose partial file is gone
    /// fails the request with ``CourierError/Kind/invalidResumeData``.
    public func download(
        resumingWith resumeData: Data,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let decoded: DownloadResumeData
        do {
            decoded = try DownloadResumeData(data: resumeData)
        } catch {
            // Whoever starts it (a monitor told of its creation, say) gets the same error.
            let failure = (error as? CourierError) ?? .invalidResumeData(error)
            let failed = download(
                FailedConvertible(error: failure),
                interceptor: interceptor,
                shouldAutomaticallyResume: shouldAutomaticallyResume,
                to: destination
            )
            failed.finish(error: failure)
            return failed
        }
        return
            register(
                DownloadRequest(
                    convertible: decoded.urlRequest,
                    downloadable: .resumeData(resumeData),
                    destination: destination,
                    resumingFrom: decoded,
                    serializationQueue: serializationQueue,
                    eventMonitor: requestEventMonitor,
                    interceptor: interceptor,
                    session: self
                ),
                automaticallyResuming: shouldAutomaticallyResume
            )
    }
}

/// A request that cannot be built, for a request that has failed before it started.
private struct FailedConvertible: URLRequestConvertible {
    let error: any Error

    func asURLRequest() throws -> URLRequest { throw error }
}
