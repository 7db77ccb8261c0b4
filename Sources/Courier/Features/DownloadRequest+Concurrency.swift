import Foundation

/// The async form of a ``DownloadRequest``'s response handler: await ``value``, ``result`` or ``response``.
///
/// Cancelling the Swift task that awaits any of them cancels the download (without resume data;
/// call ``DownloadRequest/cancel(producingResumeData:)`` to keep the partial file), unless the task
/// was made with `automaticallyCancelling: false` (Alamofire's default): the awaiting task then
/// waits for the download to end as it would.
public struct DownloadTask<Value: Sendable>: Sendable {
    let request: DownloadRequest
    private let future: ResponseFuture<DownloadResponse<Value, CourierError>>
    private let automaticallyCancelling: Bool

    init(
        request: DownloadRequest,
        future: ResponseFuture<DownloadResponse<Value, CourierError>>,
        automaticallyCancelling: Bool = true
    ) {
        self.request = request
        self.future = future
        self.automaticallyCancelling = automaticallyCancelling
    }

    /// The whole response: request, response head, file, resume data, metrics and result.
    public var response: DownloadResponse<Value, CourierError> {
        get async {
            guard automaticallyCancelling else { return await future.value }
            return await withTaskCancellationHandler {
                await future.value
            } onCancel: { [request] in
                request.cancel()
            }
        }
    }

    /// The serialized value or the error.
    public var result: Result<Value, CourierError> {
        get async { await response.result }
    }

    /// The serialized value.
    ///
    /// - Throws: The request's ``CourierError``.
    public var value: Value {
        get async throws(CourierError) { try await result.get() }
    }

    /// Cancels the download.
    public func cancel() {
        request.cancel()
    }
}

extension DownloadRequest {
    /// The downloaded file's URL, awaited: `try await download.serializingDownloadedFileURL().value`.
    public func serializingDownloadedFileURL(automaticallyCancelling: Bool = true) -> DownloadTask<URL> {
        serializingDownload(using: URLResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The file's contents as `Data`, awaited (see ``DataResponseSerializer``).
    public func serializingData(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<Data> {
        serializingDownload(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The file's contents as text, awaited (see ``StringResponseSerializer``).
    public func serializingString(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<String> {
        serializingDownload(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The file's contents decoded as `type`, awaited (see ``DecodableResponseSerializer``).
    public func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self,
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DownloadTask<T> {
        serializingDownload(
            using: DecodableResponseSerializer<T>(
                dataPreprocessor: dataPreprocessor,
                decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The value `serializer` makes of the download, awaited.
    public func serializingDownload<Serializer: DownloadResponseSerializerProtocol>(
        using serializer: Serializer,
        automaticallyCancelling: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> {
        let future = ResponseFuture<DownloadResponse<Serializer.SerializedObject, CourierError>>(
            sharingLockWith: mutableState
        )
        response(queue: serializationQueue, responseSerializer: serializer) { future.fulfil(with: $0) }
        return DownloadTask(request: self, future: future, automaticallyCancelling: automaticallyCancelling)
    }
}
