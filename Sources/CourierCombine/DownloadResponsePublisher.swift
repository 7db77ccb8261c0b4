import Foundation

/// Publishes a `DownloadRequest`'s response once, then finishes, as Alamofire's
/// `DownloadResponsePublisher`. Make one with `publishResponse(using:on:)`, `publishURL()`,
/// `publishData()`, `publishString()`, `publishDecodable(type:)` or `publishUnserialized()`.
///
/// The download starts at the subscriber's first demand; cancelling the subscription cancels it.
public struct DownloadResponsePublisher<Value: Sendable>: Publisher, Sendable {
    /// The response, with its serialized value or error.
    public typealias Output = DownloadResponse<Value, CourierError>
    /// Never: the error is in the response.
    public typealias Failure = Never

    private let request: DownloadRequest
    private let addHandler: @Sendable (@escaping @Sendable (Output) -> Void) -> Void

    /// A publisher of `request`'s response, serialized by `serializer` and delivered on `queue`.
    public init<Serializer: DownloadResponseSerializerProtocol>(
        _ request: DownloadRequest,
        queue: DispatchQueue,
        serializer: Serializer
    ) where Value == Serializer.SerializedObject {
        self.request = request
        addHandler = { _ = request.response(queue: queue, responseSerializer: serializer, completionHandler: $0) }
    }

    /// A publisher of `request`'s unserialized response (the file's URL, if any), on `queue`.
    public init(_ request: DownloadRequest, queue: DispatchQueue) where Value == URL? {
        self.request = request
        addHandler = { _ = request.response(queue: queue, completionHandler: $0) }
    }

    /// The response's `result` alone.
    public func result() -> AnyPublisher<Result<Value, CourierError>, Never> {
        map(\.result).eraseToAnyPublisher()
    }

    /// The serialized value, or a failure with the download's `CourierError`.
    public func value() -> AnyPublisher<Value, CourierError> {
        setFailureType(to: CourierError.self).flatMap(\.result.publisher).eraseToAnyPublisher()
    }

    /// Attaches `subscriber`; the download starts at its first demand.
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        subscriber.receive(
            subscription: ResponseSubscription(
                request: request,
                downstream: AnySubscriber(subscriber),
                addHandler: addHandler
            )
        )
    }
}

extension DownloadRequest {
    /// A publisher of the download serialized by `serializer`, delivered on `queue`.
    public func publishResponse<Serializer: DownloadResponseSerializerProtocol>(
        using serializer: Serializer,
        on queue: DispatchQueue = .courierCallbacks
    ) -> DownloadResponsePublisher<Serializer.SerializedObject> {
        DownloadResponsePublisher(self, queue: queue, serializer: serializer)
    }

    /// A publisher of the downloaded file's URL at its destination.
    public func publishURL(queue: DispatchQueue = .courierCallbacks) -> DownloadResponsePublisher<URL> {
        publishResponse(using: URLResponseSerializer(), on: queue)
    }

    /// A publisher of the file's contents as `Data`.
    public func publishData(
        queue: DispatchQueue = .courierCallbacks,
        preprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadResponsePublisher<Data> {
        publishResponse(
            using: DataResponseSerializer(
                dataPreprocessor: preprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            on: queue
        )
    }

    /// A publisher of the file's contents as a `String`.
    public func publishString(
        queue: DispatchQueue = .courierCallbacks,
        preprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadResponsePublisher<String> {
        publishResponse(
            using: StringResponseSerializer(
                dataPreprocessor: preprocessor,
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            on: queue
        )
    }

    /// A publisher of the file's contents decoded as `type`.
    public func publishDecodable<T: Decodable & Sendable>(
        type: T.Type = T.self,
        queue: DispatchQueue = .courierCallbacks,
        preprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DownloadResponsePublisher<T> {
        publishResponse(
            using: DecodableResponseSerializer<T>(
                dataPreprocessor: preprocessor,
                decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            on: queue
        )
    }

    /// A publisher of the download as it came: the file's URL, or the error.
    /// (`on:`, as in Alamofire, where the data form says `queue:`.)
    public func publishUnserialized(on queue: DispatchQueue = .courierCallbacks) -> DownloadResponsePublisher<URL?> {
        DownloadResponsePublisher(self, queue: queue)
    }
}
