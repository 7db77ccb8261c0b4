import Foundation

/// The async form of a ``DownloadRequest``'s response handler: await ``value``, ``result`` or ``response``.
///
/// Cancelling the Swift task that awaits any of them cancels the download (without resume data;
/// call ``DownloadRequest/cancel(producingResumeData:)`` to keep the partial file).
public struct DownloadTask<Value: Sendable>: Sendable {
    private let request: DownloadRequest
    private let future: ResponseFuture<DownloadResponse<Value, CourierError>>

    init(request: DownloadRequest, future: ResponseFuture<DownloadResponse<Value, CourierError>>) {
        self.request = request
        self.future = future
    }

    /// The whole response: request, response head, file, resume data, metrics and result.
    public var response: DownloadResponse<Value, CourierError> {
        get async {
            await withTaskCancellationHandler {
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
    public func serializingDownloadedFileURL() -> DownloadTask<URL> {
        let future = ResponseFuture<DownloadResponse<URL, CourierError>>(sharingLockWith: mutableState)
        responseURL(queue: serializationQueue) { future.fulfil(with: $0) }
        return DownloadTask(request: self, future: future)
    }

    /// The file's contents as `Data`, awaited.
    public func serializingData() -> DownloadTask<Data> {
        serializingDownload(using: DataResponseSerializer())
    }

    /// The file's contents as text, awaited (see ``StringResponseSerializer``).
    public func serializingString(encoding: String.Encoding? = nil) -> DownloadTask<String> {
        serializingDownload(using: StringResponseSerializer(encoding: encoding))
    }

    /// The file's contents decoded as `type`, awaited.
    public func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self,
        decoder: @escaping @Sendable () -> any DataDecoder = { JSONDecoder() }
    ) -> DownloadTask<T> {
        serializingDownload(using: DecodableResponseSerializer<T>(decoder: decoder))
    }

    /// The value `serializer` makes of the file's contents, awaited.
    public func serializingDownload<Serializer: ResponseSerializer>(
        using serializer: Serializer
    ) -> DownloadTask<Serializer.SerializedObject> {
        let future = ResponseFuture<DownloadResponse<Serializer.SerializedObject, CourierError>>(
            sharingLockWith: mutableState
        )
        response(queue: serializationQueue, responseSerializer: serializer) { future.fulfil(with: $0) }
        return DownloadTask(request: self, future: future)
    }
}
