import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadRequest {
    /// A custom validation of a download: return `.failure` to fail it with your error. `fileURL`
    /// is the complete file at its temporary location (it moves to the destination only after
    /// every validation passed); read it only if you need to.
    public typealias Validation =
        @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse, _ fileURL: URL?) -> Result<Void, any Error>

    /// Fails the download unless `validation` accepts it; see ``Validation``. Its
    /// `HTTPURLResponse` is built for it (see ``ResponseHead``); the status and content-type
    /// validators read the head instead.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator(runsInline: false) { request, input in
            guard let download = request as? DownloadRequest, let response = input.head?.httpURLResponse else {
                return nil
            }
            if case .failure(let error) = validation(input.request?.urlRequest, response, download.temporaryURL) {
                return (error as? CourierError) ?? .responseValidationFailed(.customValidationFailed(error: error))
            }
            return nil
        }
    }

    // MARK: - Response handlers

    /// Calls `completionHandler` on `queue` with the raw outcome: the file's URL, or the error.
    @discardableResult
    public func response(
        queue: DispatchQueue = .courierCallbacks,
        completionHandler: @escaping @Sendable (DownloadResponse<URL?, CourierError>) -> Void
    ) -> Self {
        appendDownloadHandler(queue: queue, completionHandler: completionHandler) { _, _, fileURL, error in
            if let error { throw error }
            return fileURL
        }
    }

    /// Calls `completionHandler` with the downloaded file's URL at its destination (see
    /// ``URLResponseSerializer``).
    @discardableResult
    public func responseURL(
        queue: DispatchQueue = .courierCallbacks,
        completionHandler: @escaping @Sendable (DownloadResponse<URL, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the value `serializer` makes of the download. A
    /// ``ResponseSerializer`` reads the file into memory for it: use one for files small enough to
    /// hold. Courier's serializers are given the head
    /// (``DownloadResponseSerializerProtocol/serializeDownload(request:head:fileURL:error:)``), so
    /// none of them builds an `HTTPURLResponse`.
    @discardableResult
    public func response<Serializer: DownloadResponseSerializerProtocol>(
        queue: DispatchQueue = .courierCallbacks,
        responseSerializer serializer: Serializer,
        completionHandler: @escaping @Sendable (DownloadResponse<Serializer.SerializedObject, CourierError>) -> Void
    ) -> Self {
        appendDownloadHandler(queue: queue, completionHandler: completionHandler) { request, head, fileURL, error in
            try serializer.serializeDownload(request: request, head: head, fileURL: fileURL, error: error)
        }
    }

    /// Calls `completionHandler` with the file's contents as `Data` (see ``DataResponseSerializer``).
    @discardableResult
    public func responseData(
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DownloadResponse<Data, CourierError>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            completionHandler: completionHandler
        )
    }

    /// Calls `completionHandler` with the file's contents as text (see ``StringResponseSerializer``).
    @discardableResult
    public func responseString(
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DownloadResponse<String, CourierError>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            completionHandler: completionHandler
        )
    }

    /// Calls `completionHandler` with the file's contents decoded as `type` (see
    /// ``DecodableResponseSerializer``).
    @discardableResult
    public func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self,
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DownloadResponse<T, CourierError>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer<T>(
                dataPreprocessor: dataPreprocessor,
                decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            completionHandler: completionHandler
        )
    }

    // MARK: - Serializing

    /// Runs `serialize` on the serialization queue (the file's) once the request has finished and its file is
    /// settled (moved, kept for resuming, or removed), then calls `completionHandler` on `queue`.
    /// With a retrier, `serialize` runs once the file is at its destination and before the
    /// request finishes, so that the retriers can act on its failure, as for a data request
    /// (see `SerializerCheck`); the handler then receives that result.
    private func appendDownloadHandler<Value: Sendable>(
        queue: DispatchQueue,
        completionHandler: @escaping @Sendable (DownloadResponse<Value, CourierError>) -> Void,
        serialize: @escaping @Sendable (URLRequest?, ResponseHead?, URL?, CourierError?) throws -> Value
    ) -> Self {
        let run: @Sendable (Outcome) -> SerializerCheck<Outcome, Value>.Serialized = { outcome in
            measuredSerialization { try serialize(outcome.request, outcome.head, outcome.fileURL, outcome.error) }
        }
        let check = registerSerializerCheck(run)
        // Weak: the handler sits in the request, and runs while the request is alive; a strong
        // hold would keep a request that is never started (and its session) alive for good.
        appendFinishHandler { [weak self] in
            guard let self else { return }
            // Behind the file's own settling, which the request queued on the same queue (the
            // file's is the serialization queue) when it finished.
            file.queue.async { [self] in
                let outcome = outcome()
                // Serialized already, before the request finished, for a retry decision.
                let (result, duration) = check?.take(failed: outcome.error != nil) ?? run(outcome)
                let downloadResponse = DownloadResponse(
                    request: outcome.request,
                    head: outcome.head,
                    fileURL: outcome.fileURL,
                    resumeData: outcome.resumeData,
                    metrics: outcome.metrics,
                    serializationDuration: duration,
                    result: result
                )
                monitor?.request(self, didParseResponse: downloadResponse)
                queue.async { completionHandler(downloadResponse) }
            }
        }
        return self
    }
}

extension DownloadRequest {
    /// What a download's handlers serialize: its last request and response, and its file.
    struct Outcome: Sendable {
        let request: URLRequest?
        /// The head, not an `HTTPURLResponse`: one is built only if a handler reads it.
        let head: ResponseHead?
        let fileURL: URL?
        let resumeData: Data?
        let metrics: RequestMetrics?
        let error: CourierError?
    }

    /// The download as its handlers see it now.
    func outcome() -> Outcome {
        let (requestHead, head, metrics, error) = mutableState.withLock {
            ($0.requests.last, $0.responseHead, $0.metrics.last, $0.error)
        }
        return Outcome(
            request: requestHead?.urlRequest,
            head: head,
            fileURL: fileURL,
            resumeData: resumeData,
            metrics: metrics,
            error: error
        )
    }
}
