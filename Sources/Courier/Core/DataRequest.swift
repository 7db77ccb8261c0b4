import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// @unchecked Sendable: all mutable state lives in Request's `mutableState`, behind its one lock.
/// A request whose response body is collected in memory, then validated and serialized by the
/// handlers you add: ``responseData(queue:dataPreprocessor:emptyResponseCodes:emptyRequestMethods:completionHandler:)``, `responseDecodable(of:)`,
/// or their async forms such as `serializingDecodable(_:)`.
public class DataRequest: Request, @unchecked Sendable {
    /// The largest body accepted, or `nil` for no limit.
    let maximumBodySize: Int?

    init(
        convertible: any URLRequestConvertible,
        maximumBodySize: Int?,
        serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?,
        session: Session,
        customOperation: CustomOperation? = nil
    ) {
        self.maximumBodySize = maximumBodySize
        super.init(
            convertible: convertible,
            serializationQueue: serializationQueue,
            eventMonitor: eventMonitor,
            interceptor: interceptor,
            session: session,
            customOperation: customOperation
        )
    }

    /// The response body received so far (all of it once finished), or `nil` before any arrives.
    public var data: Data? { mutableState.withLock { $0.data } }

    /// A new request doing the same work, not yet started (Siesta's `repeated()`): it builds its
    /// URLRequest afresh from ``Request/convertible`` (a custom request starts from its delegate's
    /// `repeated()`), with this request's interceptors, start choice, redirect, credential and
    /// cache settings, and none of its validators or handlers. Like any request, it starts when
    /// its first response handler is added (or ``Request/resume()`` is called).
    ///
    /// Use it to run a request again after it ended, for a "try again" button or a refresh. If the
    /// session is gone, the repeat fails with ``CourierError/Kind/sessionInvalidated``.
    ///
    /// The interceptor given when the request was made always comes along; those added later
    /// (``Request/interceptor(_:)``, `adapt(using:)`, `retry(using:)`) only while this request
    /// runs: a finished request lets go of them, as they may hold it. Add them to the repeat again.
    public func repeated() -> DataRequest {
        let session = sessionForRepeat
        let again =
            if let customOperation {
                session.request(
                    using: customOperation.original.repeated(),
                    interceptor: creationInterceptor,
                    shouldAutomaticallyResume: shouldAutomaticallyResume,
                    usesSessionInterceptor: customOperation.usesSessionInterceptor
                )
            } else {
                session.request(
                    convertible,
                    interceptor: creationInterceptor,
                    shouldAutomaticallyResume: shouldAutomaticallyResume
                )
            }
        copySettings(to: again)
        return again
    }

    // MARK: - Transport events

    /// Records the head; the `HTTPURLResponse` is built only if something reads it. With an
    /// `onHTTPResponse` handler or a head validator, the attempt's completion waits for their
    /// verdict: the handler's first (the transfer is held back meanwhile), then the validator's.
    override func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive head: ResponseHead) {
        typealias HeadValidator = (queue: DispatchQueue, validate: @Sendable (HTTPURLResponse) throws -> Void)
        typealias HeadChecks = (
            validator: HeadValidator?, responseHook: (DispatchQueue, RequestHooks.HTTPResponseHandler)?
        )
        let expectedLength = head.expectedContentLength
        let (isCurrent, checks) = mutableState.withLock { state -> (Bool, HeadChecks?) in
            guard state.attempt === attempt else { return (false, nil) }
            state.responseHead = head
            state.data = nil
            state.bytesReceived = 0
            state.bytesExpected = expectedLength
            let responseHook = state.hooks.httpResponse
            guard state.headValidator != nil || responseHook != nil, state.machine.headCheckStarted() else {
                return (true, nil)
            }
            return (true, (state.headValidator, responseHook))
        }
        guard isCurrent else { return }
        monitor?.request(self, didReceive: head)
        guard let checks else { return }
        // The body waits for the handler's answer, as Alamofire's does: a handler that cancels on
        // the head (a length or type it does not want) spares the transfer.
        if checks.responseHook != nil { holdTransferBack(true, for: .responseHook) }
        askHTTPResponseHandler(checks.responseHook, about: head) { [self] allowed in
            // Cancelling finishes the request at once; its held completion, if any, is dropped.
            guard allowed else {
                cancel()
                return
            }
            if checks.responseHook != nil { holdTransferBack(false, for: .responseHook) }
            guard let (queue, validate) = checks.validator else {
                return didCheckHead(of: attempt, task: task, rejection: nil)
            }
            queue.async { [self] in
                var rejection: CourierError?
                do {
                    if let response = head.httpURLResponse { try validate(response) }
                } catch {
                    rejection = .responseValidationFailed(.customValidationFailed(error: error))
                }
                didCheckHead(of: attempt, task: task, rejection: rejection)
            }
        }
    }

    /// The head validator's verdict: a rejection stops the transfer (its completion then fails
    /// with it); a completion that came first, and waited, is replayed now.
    private func didCheckHead(of attempt: Attempt, task: any TransportTask, rejection: CourierError?) {
        let action = mutableState.withLock { state -> StateMachine.HeadVerdictAction in
            guard state.attempt === attempt else { return .none }
            return state.machine.headChecked(rejection: rejection)
        }
        switch action {
        case .none: break
        case .cancelTask: task.cancel()
        case .completeHeld(let held):
            self.attempt(attempt, of: task, didCompleteWith: held.error, metrics: held.metrics)
        }
    }

    override func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive data: Data) {
        enum Outcome {
            case ignored, tooLarge
            case stored(reportsProgress: Bool)
        }
        let outcome = mutableState.withLock { state -> Outcome in
            guard state.attempt === attempt else { return .ignored }
            if let limit = maximumBodySize, (state.data?.count ?? 0) + data.count > limit {
                return .tooLarge
            }
            if state.data == nil {
                state.data = data
            } else {
                state.data?.append(data)
            }
            state.bytesReceived += Int64(data.count)
            // Most requests have no progress listener: no second lock per piece for them.
            return .stored(reportsProgress: state.downloadReporter.hasListeners)
        }
        if case .stored = outcome { announceBodyPiece(data.count) }
        switch outcome {
        case .ignored, .stored(reportsProgress: false):
            return
        case .tooLarge:
            // Finish first: cancelling can complete the task synchronously, and that completion
            // must find the request finished rather than report a cancellation.
            finish(error: .bodyTooLarge(limit: maximumBodySize ?? 0))
            task.cancel()
        case .stored(reportsProgress: true):
            reportDownloadProgress()
        }
    }

    override func attempt(
        _ attempt: Attempt,
        of task: any TransportTask,
        didCompleteWith error: URLError?,
        metrics: RequestMetrics
    ) {
        typealias Completion = (
            rejection: CourierError?,
            validation: (validators: [Validator], input: ValidationInput),
            /// `nil` when Courier's own checks are all there is: they run here.
            runners: [ValidationRunner]?
        )
        let completion = mutableState.withLock { state -> Completion? in
            guard state.attempt === attempt else { return nil }
            // While the head is still being checked, its verdict decides how this attempt ended.
            if state.machine.holdCompletionForHeadCheck(.init(error: error, metrics: metrics)) { return nil }
            state.metrics.append(metrics)
            let rejection = state.machine.headRejection
            guard state.machine.attemptCompleted() == .complete else { return nil }
            // Between attempts none is current, so a late event of this one is ignored.
            state.attempt = nil
            state.task = nil
            post(.didCompleteTask)
            let validation = state.validationWork
            let runsHere = validation.validators.allSatisfy(\.runsInline)
            return (rejection, validation, runsHere ? nil : state.validationRunners)
        }
        guard let (rejection, validation, runners) = completion else { return }
        // A rejected head cancelled the transfer: the rejection, not the cancellation, is the error.
        let attemptError = rejection ?? error.map(CourierError.attemptFailed)
        monitor?.request(self, didCompleteAttemptWith: metrics, error: attemptError)
        if let attemptError {
            retryOrFinish(error: attemptError)
            return
        }
        // Courier's own checks run here, so the response goes from the transport's thread
        // straight to whoever awaits it. Validators of the caller's are user code: they run off
        // the transport's thread (an event loop, with AsyncHTTPClient), in the task that awaits
        // the response if one is waiting (still one hop), else on the serializers' queue.
        // Decided on the validators taken with the completion: one added since never runs here.
        if let runners {
            let job: @Sendable () -> Void = { [self] in validateAndFinish(validation) }
            if !runners.contains(where: { $0(job) }) { serializationQueue.async(execute: job) }
            return
        }
        validateAndFinish(validation)
    }

    private func validateAndFinish(_ validation: (validators: [Validator], input: ValidationInput)) {
        let validationError = runValidators(validation)
        monitor?.request(self, didValidateWithError: validationError)
        retryOrFinish(error: validationError)
    }

    override func finishSucceeded() {
        checkSerializersThenFinish()
    }

    // MARK: - Response handlers

    /// Calls `completionHandler` on `queue` with the raw outcome: the body, if any, or the error.
    @discardableResult
    public func response(
        queue: DispatchQueue = .courierCallbacks,
        completionHandler: @escaping @Sendable (DataResponse<Data?, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: PassthroughSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` on `queue` with the value `serializer` makes of the response.
    @discardableResult
    public func response<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue = .courierCallbacks,
        responseSerializer serializer: Serializer,
        completionHandler: @escaping @Sendable (DataResponse<Serializer.SerializedObject, CourierError>) -> Void
    ) -> Self {
        let check = serializerCheck(for: serializer)
        // Weak: the handler sits in the request, and runs while the request is alive; a strong
        // hold would keep a request that is never started (and its session) alive for good.
        appendFinishHandler { [weak self] in
            guard let self else { return }
            serializationQueue.async { [self] in
                let outcome = outcome()
                // Serialized already, before the request finished, for a retry decision.
                let (result, duration) =
                    check?.take(failed: outcome.error != nil) ?? Self.serialize(outcome, with: serializer)
                let dataResponse = DataResponse(
                    requestHead: outcome.request,
                    head: outcome.head,
                    data: outcome.data,
                    metrics: outcome.metrics,
                    serializationDuration: duration,
                    result: result
                )
                monitor?.request(self, didParseResponse: dataResponse)
                queue.async { completionHandler(dataResponse) }
            }
        }
        return self
    }

    /// Calls `completionHandler` with the body as `Data` (see ``DataResponseSerializer``).
    @discardableResult
    public func responseData(
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DataResponse<Data, CourierError>) -> Void
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

    /// Calls `completionHandler` with the body as text (see ``StringResponseSerializer``).
    @discardableResult
    public func responseString(
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DataResponse<String, CourierError>) -> Void
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

    /// Calls `completionHandler` with the body decoded as `type` (see ``DecodableResponseSerializer``).
    @discardableResult
    public func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self,
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DataResponse<T, CourierError>) -> Void
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

    /// The body as it came, `nil` included, or the request's error: what `response(queue:completionHandler:)` reports.
    private struct PassthroughSerializer: DataResponseSerializerProtocol {
        func serialize(
            request: URLRequest?,
            response: HTTPURLResponse?,
            data: Data?,
            error: CourierError?
        ) throws -> Data? {
            if let error { throw error }
            return data
        }

        func serialize(request: URLRequest?, head: ResponseHead?, data: Data?, error: CourierError?) throws -> Data? {
            if let error { throw error }
            return data
        }

        func serialize(
            requestHead: RequestHead?,
            head: ResponseHead?,
            data: Data?,
            error: CourierError?
        ) throws
            -> Data?
        {
            if let error { throw error }
            return data
        }
    }

    /// What a finished request produced, before any serializer has run.
    struct Outcome: Sendable {
        let request: RequestHead?
        let head: ResponseHead?
        let data: Data?
        let metrics: RequestMetrics?
        let error: CourierError?
    }

    func outcome() -> Outcome {
        mutableState.withLock {
            Outcome(
                request: $0.requests.last,
                head: $0.responseHead,
                data: $0.data,
                metrics: $0.metrics.last,
                error: $0.error
            )
        }
    }
}
