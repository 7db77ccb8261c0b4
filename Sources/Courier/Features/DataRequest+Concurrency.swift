import Foundation

/// The async form of a ``DataRequest``'s response handler: await ``value``, ``result`` or ``response``.
///
/// Cancelling the Swift task that awaits any of them cancels the request, and its transfer,
/// unless the task was made with `automaticallyCancelling: false` (Alamofire's default): the
/// awaiting task then waits for the request to end as it would.
public struct DataTask<Value: Sendable>: Sendable {
    let request: DataRequest
    private let outcome: SerializedOutcome<Value>
    private let automaticallyCancelling: Bool

    init(request: DataRequest, outcome: SerializedOutcome<Value>, automaticallyCancelling: Bool = true) {
        self.request = request
        self.outcome = outcome
        self.automaticallyCancelling = automaticallyCancelling
    }

    /// The whole response: request, response head, body, metrics and result.
    ///
    /// The serializer runs in the first task that awaits it, straight from the transport's
    /// completion: no queue hop between the network and your code. Validator closures you added
    /// (`validate(_:)`, `validate(contentType:)`) run in that task too, once it has begun awaiting.
    public var response: DataResponse<Value, CourierError> {
        get async { await awaitResponse() }
    }

    /// The serialized value or the error.
    public var result: Result<Value, CourierError> {
        get async { await awaitResponse().result }
    }

    /// The serialized value.
    ///
    /// - Throws: The request's ``CourierError``.
    public var value: Value {
        get async throws(CourierError) { try await awaitResponse().result.get() }
    }

    /// The response; cancelling the awaiting task cancels the request. Each accessor calls it
    /// directly rather than through the others: one async frame fewer per await.
    private func awaitResponse() async -> DataResponse<Value, CourierError> {
        guard automaticallyCancelling else { return await outcome.response }
        return await withTaskCancellationHandler {
            await outcome.response
        } onCancel: { [request] in
            request.cancel()
        }
    }

    /// Cancels the request.
    public func cancel() {
        request.cancel()
    }
}

extension DataRequest {
    /// The body as `Data`, awaited: `try await request.serializingData().value` (see
    /// ``DataResponseSerializer``).
    public func serializingData(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<Data> {
        serializingResponse(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The body as text, awaited (see ``StringResponseSerializer``).
    public func serializingString(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<String> {
        serializingResponse(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The body decoded as `type`, awaited: `try await request.serializingDecodable(User.self).value`
    /// (see ``DecodableResponseSerializer``).
    public func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self,
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DataTask<T> {
        serializingResponse(
            using: DecodableResponseSerializer<T>(
                dataPreprocessor: dataPreprocessor,
                decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The value `serializer` makes of the response, awaited.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer,
        automaticallyCancelling: Bool = true
    ) -> DataTask<Serializer.SerializedObject> {
        let check = serializerCheck(for: serializer)
        // Weak: the outcome is held by the request's finish handler; see `response(queue:…)`.
        let outcome = SerializedOutcome<Serializer.SerializedObject>(sharingLockWith: mutableState) {
            [weak self] outcome in
            // Serialized already, before the request finished, for a retry decision.
            let (result, duration) =
                check?.take(failed: outcome.error != nil) ?? Self.serialize(outcome, with: serializer)
            let response = DataResponse(
                requestHead: outcome.request,
                head: outcome.head,
                data: outcome.data,
                metrics: outcome.metrics,
                serializationDuration: duration,
                result: result
            )
            if let self { monitor?.request(self, didParseResponse: response) }
            return response
        }
        // Hands over the raw outcome where the request finishes; the awaiting task, resumed from
        // there, serializes: the one hop between the last byte and the caller's code. Validator
        // closures of the caller's run in that task too, once it has begun awaiting.
        appendFinishHandler(validationRunner: { [outcome] in outcome.runValidation($0) }) { [weak self, outcome] in
            guard let self else { return }
            outcome.fulfil(with: self.outcome())
        }
        return DataTask(request: self, outcome: outcome, automaticallyCancelling: automaticallyCancelling)
    }
}
