import Foundation

/// Publishes a `DataRequest`'s response once, then finishes, as Alamofire's
/// `DataResponsePublisher`. Make one with `publishResponse(using:on:)`, `publishData()`,
/// `publishString()`, `publishDecodable(type:)` or `publishUnserialized()`.
///
/// The request starts at the subscriber's first demand; cancelling the subscription cancels the
/// request. It never fails: a failure is in the response's `result`, or use ``value()`` for a
/// publisher that fails with the `CourierError`.
public struct DataResponsePublisher<Value: Sendable>: Publisher, Sendable {
    /// The response, with its serialized value or error.
    public typealias Output = DataResponse<Value, CourierError>
    /// Never: the error is in the response.
    public typealias Failure = Never

    private let request: DataRequest
    private let addHandler: @Sendable (@escaping @Sendable (Output) -> Void) -> Void

    /// A publisher of `request`'s response, serialized by `serializer` and delivered on `queue`.
    public init<Serializer: DataResponseSerializerProtocol>(
        _ request: DataRequest,
        queue: DispatchQueue,
        serializer: Serializer
    ) where Value == Serializer.SerializedObject {
        self.request = request
        addHandler = { _ = request.response(queue: queue, responseSerializer: serializer, completionHandler: $0) }
    }

    /// A publisher of `request`'s unserialized response (`Data?`), delivered on `queue`.
    public init(_ request: DataRequest, queue: DispatchQueue) where Value == Data? {
        self.request = request
        addHandler = { _ = request.response(queue: queue, completionHandler: $0) }
    }

    /// The response's `result` alone.
    public func result() -> AnyPublisher<Result<Value, CourierError>, Never> {
        map(\.result).eraseToAnyPublisher()
    }

    /// The serialized value, or a failure with the request's `CourierError`.
    public func value() -> AnyPublisher<Value, CourierError> {
        setFailureType(to: CourierError.self).flatMap(\.result.publisher).eraseToAnyPublisher()
    }

    /// Attaches `subscriber`; the request starts at its first demand.
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

extension DataRequest {
    /// A publisher of the response serialized by `serializer`, delivered on `queue`.
    public func publishResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer,
        on queue: DispatchQueue = .courierCallbacks
    ) -> DataResponsePublisher<Serializer.SerializedObject> {
        DataResponsePublisher(self, queue: queue, serializer: serializer)
    }

    /// A publisher of the body as `Data`, as `responseData` serializes it.
    public func publishData(
        queue: DispatchQueue = .courierCallbacks,
        preprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponsePublisher<Data> {
        publishResponse(
            using: DataResponseSerializer(
                dataPreprocessor: preprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            on: queue
        )
    }

    /// A publisher of the body as a `String`, as `responseString` serializes it (in `encoding`,
    /// else the response's charset, else UTF-8).
    public func publishString(
        queue: DispatchQueue = .courierCallbacks,
        preprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponsePublisher<String> {
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

    /// A publisher of the body decoded as `type`, as `responseDecodable` decodes it.
    public func publishDecodable<T: Decodable & Sendable>(
        type: T.Type = T.self,
        queue: DispatchQueue = .courierCallbacks,
        preprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DataResponsePublisher<T> {
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

    /// ``publishDecodable(type:queue:preprocessor:decoder:emptyResponseCodes:emptyRequestMethods:)``
    /// under Alamofire's old spelling of its last parameter.
    @available(
        *,
        deprecated,
        renamed: "publishDecodable(type:queue:preprocessor:decoder:emptyResponseCodes:emptyRequestMethods:)"
    )
    public func publishDecodable<T: Decodable & Sendable>(
        type: T.Type = T.self,
        queue: DispatchQueue = .courierCallbacks,
        preprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyResponseMethods: Set<HTTPMethod>
    ) -> DataResponsePublisher<T> {
        publishDecodable(
            type: type,
            queue: queue,
            preprocessor: preprocessor,
            decoder: decoder,
            emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyResponseMethods
        )
    }

    /// A publisher of the response as it came, its body `nil` when empty.
    public func publishUnserialized(queue: DispatchQueue = .courierCallbacks) -> DataResponsePublisher<Data?> {
        DataResponsePublisher(self, queue: queue)
    }
}
