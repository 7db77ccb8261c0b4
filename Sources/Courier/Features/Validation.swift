import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataRequest {
    /// A custom validation: return `.failure` to fail the request with your error.
    public typealias Validation =
        @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse, _ data: Data?) -> Result<
            Void, any Error
        >

    /// Fails the request unless `validation` accepts the response. Validators run in the order
    /// added, once the response has arrived; the first failure becomes the request's error as
    /// ``CourierError/ValidationFailureReason/customValidationFailed(error:)``.
    ///
    /// Where it runs: in the task awaiting the response (`serializingData()` and the like, made
    /// after this call) once it has begun awaiting, with that task's priority and task-local
    /// values; otherwise on the request's ``Request/serializationQueue``. In a task it runs on Swift's cooperative thread
    /// pool, so it must not block (no semaphores waiting for other tasks).
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator(runsInline: false) { request, input in
            guard let response = input.head?.httpURLResponse else { return nil }
            let data = (request as? DataRequest)?.data
            if case .failure(let error) = validation(input.request?.urlRequest, response, data) {
                return (error as? CourierError) ?? .responseValidationFailed(.customValidationFailed(error: error))
            }
            return nil
        }
    }

    /// Checks each attempt's response head as soon as it arrives, before the body is read: throw
    /// to stop the transfer (a `503` page, an HTML error where JSON was expected, a body too big
    /// by its `Content-Length`). The attempt then fails with
    /// ``CourierError/ValidationFailureReason/customValidationFailed(error:)`` carrying your error,
    /// which retriers see like any other failure. Runs on `queue`; a later call replaces it.
    @discardableResult
    public func validateResponseHead(
        queue: DispatchQueue = .courierCallbacks,
        _ validation: @escaping @Sendable (HTTPURLResponse) throws -> Void
    ) -> Self {
        // The replaced closure is released after unlocking: what it captured may call the
        // request from its deinit.
        let replaced = mutableState.withLock { state in
            defer { state.headValidator = (queue, validation) }
            return state.headValidator
        }
        _ = replaced
        return self
    }

}

extension DataStreamRequest {
    /// A custom validation of a stream's response head: return `.failure` to fail the request
    /// with your error, before any piece of the body is handed on.
    public typealias Validation =
        @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse) -> Result<Void, any Error>

    /// Fails the request unless `validation` accepts the response head, as Alamofire's
    /// `DataStreamRequest.validate(_:)`. Validators run in the order added, on the request's
    /// ``Request/serializationQueue``, once the head has arrived and before the first piece is
    /// handed on; the first failure becomes the request's error as
    /// ``CourierError/ValidationFailureReason/customValidationFailed(error:)``.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator(runsInline: false) { _, input in
            guard let response = input.head?.httpURLResponse else { return nil }
            if case .failure(let error) = validation(input.request?.urlRequest, response) {
                return (error as? CourierError) ?? .responseValidationFailed(.customValidationFailed(error: error))
            }
            return nil
        }
    }
}

extension Request {
    /// Fails the request unless its status code is in `acceptableStatusCodes`, e.g. `200..<300`.
    @discardableResult
    public func validate<Codes: Sequence & Sendable>(statusCode acceptableStatusCodes: Codes) -> Self
    where Codes.Element == Int {
        // Courier's own check, run where the response ends (no thread hop), unless the codes
        // come in a sequence of the caller's own type, whose `contains` is the caller's code.
        let runsInline =
            acceptableStatusCodes is Range<Int> || acceptableStatusCodes is ClosedRange<Int>
            || acceptableStatusCodes is Set<Int> || acceptableStatusCodes is [Int]
        return appendValidator(runsInline: runsInline) { _, input in
            guard let head = input.head else { return nil }
            guard acceptableStatusCodes.contains(head.statusCode) else {
                return .responseValidationFailed(.unacceptableStatusCode(code: head.statusCode))
            }
            return nil
        }
    }

    /// Fails the request unless its `Content-Type` matches one of `acceptableContentTypes`
    /// (wildcards such as `*/*` and `application/*` allowed, parameters ignored). The list is read
    /// only when the response arrives. An empty body passes.
    @discardableResult
    public func validate<Types: Sequence & Sendable>(
        contentType acceptableContentTypes: @escaping @autoclosure @Sendable () -> Types
    ) -> Self where Types.Element == String {
        appendValidator(runsInline: false) { request, input in
            guard let head = input.head else { return nil }
            return ContentTypeValidation.failure(
                acceptable: Array(acceptableContentTypes()),
                responseContentType: head.mimeType,
                bodyIsEmpty: request.receivedNoBody(input)
            )
        }
    }

    /// Fails the request unless its status is 2xx and its content type is one its `Accept`
    /// header asked for (any type when it sent none).
    @discardableResult
    public func validate() -> Self {
        // Reads the request it is given rather than `self`: a validator stored in the request
        // that captured it would keep it alive.
        validate(statusCode: 200..<300).appendValidator(runsInline: true) { request, input in
            guard let head = input.head else { return nil }
            return ContentTypeValidation.failure(
                acceptable: Self.acceptedContentTypes(of: input.request),
                responseContentType: head.mimeType,
                bodyIsEmpty: request.receivedNoBody(input)
            )
        }
    }

    /// The media types of a request's `Accept` header, or `*/*`.
    private static func acceptedContentTypes(of request: RequestHead?) -> [String] {
        guard let accept = request?.headers.value(for: "Accept") else { return ["*/*"] }
        let types = accept.split(separator: ",").compactMap {
            $0.split(separator: ";").first.map { String($0.trimmingHTTPWhitespace) }
        }
        return types.isEmpty ? ["*/*"] : types
    }

    /// Adds a validator. `runsInline` marks Courier's own checks, which may run on the
    /// transport's thread where the response ends; a request with any other validator validates
    /// in the task awaiting its response if one is waiting, else on its serialization queue, since
    /// user code never runs on an event loop.
    @discardableResult
    func appendValidator(
        runsInline: Bool,
        _ check: @escaping @Sendable (Request, ValidationInput) -> CourierError?
    ) -> Self {
        mutableState.withLock { $0.validators.append(Validator(runsInline: runsInline, check: check)) }
        return self
    }
}

/// Matching a response's media type against acceptable ones.
enum ContentTypeValidation {
    /// The failure for `responseContentType` against `acceptable`, or `nil` if it passes. The
    /// content type is read only when it matters: most requests accept anything.
    static func failure(
        acceptable: [String],
        responseContentType readContentType: @autoclosure () -> String?,
        bodyIsEmpty: Bool
    ) -> CourierError? {
        if bodyIsEmpty || acceptable.contains(where: { $0.trimmingHTTPWhitespace == "*/*" }) {
            return nil
        }
        // The error lists the acceptable types sorted, as Alamofire's does: the same message
        // whatever order they were given in.
        guard let responseContentType = readContentType(), let responseType = MediaType(responseContentType) else {
            return .responseValidationFailed(.missingContentType(acceptableContentTypes: acceptable.sorted()))
        }
        for candidate in acceptable {
            if let acceptableType = MediaType(candidate), acceptableType.matches(responseType) { return nil }
        }
        return .responseValidationFailed(
            .unacceptableContentType(
                acceptableContentTypes: acceptable.sorted(),
                responseContentType: responseContentType
            )
        )
    }

    /// `type/subtype`, lowercased, parameters dropped.
    struct MediaType {
        let type: Substring
        let subtype: Substring

        init?(_ text: String) {
            let essence =
                text.split(separator: ";", maxSplits: 1).first.map { $0.utf8.trimmingHTTPWhitespace.asciiLowercased }
                ?? ""
            let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
            type = parts[0]
            subtype = parts[1]
        }

        /// Whether this (possibly wildcard) type accepts `other`.
        func matches(_ other: MediaType) -> Bool {
            (type == "*" || type == other.type) && (subtype == "*" || subtype == other.subtype)
        }
    }
}
