import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// What to do with a response whose head an `onHTTPResponse` handler has seen: read its
    /// body, or cancel the request as ``Request/cancel()`` would.
    public enum ResponseDisposition: Sendable {
        /// Go on: read the body.
        case allow
        /// Cancel the request; it fails with ``CourierError/Kind/explicitlyCancelled``.
        case cancel
    }
}

/// The closures a caller hangs on a request's steps, each run on the queue given with it.
struct RequestHooks {
    typealias HTTPResponseHandler =
        @Sendable (HTTPURLResponse, @escaping @Sendable (Request.ResponseDisposition) -> Void) -> Void

    /// Told of every attempt's final request.
    var urlRequest: (queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)?
    /// Told of the first request's cURL command, once.
    var cURL: (queue: DispatchQueue, handler: @Sendable (String) -> Void)?
    /// Asked about every attempt's response head.
    var httpResponse: (queue: DispatchQueue, handler: HTTPResponseHandler)?
}

extension Request {
    /// Calls `handler` on `queue` with the request each attempt sends, once adapted (the first
    /// right away, if it has been made already). A later call replaces the handler.
    @discardableResult
    public func onURLRequestCreation(
        on queue: DispatchQueue = .courierCallbacks,
        perform handler: @escaping @Sendable (URLRequest) -> Void
    ) -> Self {
        let (existing, replaced) = mutableState.withLock { state in
            // A finished request makes no more: the handler is not kept (it may hold the request).
            defer { if !state.machine.hasFinished { state.hooks.urlRequest = (queue, handler) } }
            return (state.requests.last, state.hooks.urlRequest)
        }
        _ = replaced  // Released after unlocking: what it captured may call the request.
        if let existing { queue.async { handler(existing.urlRequest) } }
        return self
    }

    /// Calls `handler` on `queue`, once, with the request as a `curl` command
    /// (``cURLDescription(includingCredentials:)``, credentials redacted): now if the request has
    /// been made, else as soon as it is.
    @discardableResult
    public func cURLDescription(
        on queue: DispatchQueue = .courierCallbacks,
        calling handler: @escaping @Sendable (String) -> Void
    ) -> Self {
        let isMade = mutableState.withLock { state -> Bool in
            // Made, or never to be: a finished request describes what it has (perhaps nothing).
            guard state.requests.isEmpty, !state.machine.hasFinished else { return true }
            state.hooks.cURL = (queue, handler)
            return false
        }
        if isMade {
            let description = cURLDescription()
            queue.async { handler(description) }
        }
        return self
    }

    /// Runs the creation hooks taken when the request an attempt will send was recorded: the URL
    /// request handler each time, the cURL handler the first time.
    func callCreationHooks(_ hooks: RequestHooks, for head: RequestHead) {
        if let (queue, handler) = hooks.urlRequest {
            let urlRequest = head.urlRequest
            queue.async { handler(urlRequest) }
        }
        if let (queue, handler) = hooks.cURL {
            let description = cURLDescription()
            queue.async { handler(description) }
        }
    }

    /// Stores the `onHTTPResponse` handler, releasing the one it replaces after unlocking.
    func setHTTPResponseHandler(queue: DispatchQueue, handler: @escaping RequestHooks.HTTPResponseHandler) {
        let replaced = mutableState.withLock { state in
            // A finished request sees no more heads: the handler is not kept (it may hold the request).
            defer { if !state.machine.hasFinished { state.hooks.httpResponse = (queue, handler) } }
            return state.hooks.httpResponse
        }
        _ = replaced
    }

    /// Asks `hook` (the `onHTTPResponse` handler, if any) about `head` and calls `next` exactly
    /// once with whether the body may be read: at once when there is no handler, else when the
    /// handler answers (a second answer is ignored).
    func askHTTPResponseHandler(
        _ hook: (queue: DispatchQueue, handler: RequestHooks.HTTPResponseHandler)?,
        about head: ResponseHead,
        then next: @escaping @Sendable (Bool) -> Void
    ) {
        guard let (queue, handler) = hook, let response = head.httpURLResponse else { return next(true) }
        let answered = Protected(false)
        queue.async {
            handler(response) { disposition in
                let isFirst = answered.withLock { answered in
                    defer { answered = true }
                    return !answered
                }
                if isFirst { next(disposition == .allow) }
            }
        }
    }
}

/// A request whose response heads an `onHTTPResponse` handler can see before the body is read:
/// ``DataRequest`` (and so ``UploadRequest``) and ``DataStreamRequest``, as in Alamofire. Only
/// those two consult the handler: conforming another type of request does not make it do so.
public protocol HTTPResponseHandling: Request {}

/// ``Request/ResponseDisposition`` without the `Request.` prefix, for code outside a request type
/// (an `async` handler's return type, say).
public typealias ResponseDisposition = Request.ResponseDisposition

extension DataRequest: HTTPResponseHandling {}
extension DataStreamRequest: HTTPResponseHandling {}

extension HTTPResponseHandling {
    /// Calls `handler` on `queue` with each attempt's response head, before the body is read or
    /// any piece of it handed on; the transfer waits until `handler` calls its completion:
    /// `.allow` goes on, `.cancel` cancels the request. Call the completion exactly once, or the
    /// request never ends. A later call replaces the handler.
    @_disfavoredOverload
    @discardableResult
    public func onHTTPResponse(
        on queue: DispatchQueue = .courierCallbacks,
        perform handler:
            @escaping @Sendable (
                _ response: HTTPURLResponse, _ completionHandler: @escaping @Sendable (ResponseDisposition) -> Void
            ) -> Void
    ) -> Self {
        setHTTPResponseHandler(queue: queue, handler: handler)
        return self
    }

    /// Calls `handler` on `queue` with each attempt's response head; the transfer goes on.
    @discardableResult
    public func onHTTPResponse(
        on queue: DispatchQueue = .courierCallbacks,
        perform handler: @escaping @Sendable (HTTPURLResponse) -> Void
    ) -> Self {
        setHTTPResponseHandler(queue: queue) { response, completion in
            completion(.allow)
            handler(response)
        }
        return self
    }

    /// Awaits `handler` with each attempt's response head before the body is read or handed on:
    /// `.allow` goes on, `.cancel` cancels the request.
    @_disfavoredOverload
    @discardableResult
    public func onHTTPResponse(
        perform handler: @escaping @Sendable (HTTPURLResponse) async -> ResponseDisposition
    ) -> Self {
        setHTTPResponseHandler(queue: serializationQueue) { response, completion in
            Task { completion(await handler(response)) }
        }
        return self
    }

    /// Runs `handler` in a task with each attempt's response head; the transfer goes on.
    @discardableResult
    public func onHTTPResponse(perform handler: @escaping @Sendable (HTTPURLResponse) async -> Void) -> Self {
        setHTTPResponseHandler(queue: serializationQueue) { response, completion in
            completion(.allow)
            Task { await handler(response) }
        }
        return self
    }
}
