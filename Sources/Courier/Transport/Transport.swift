import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs attempts of requests over a network stack: the only part of Courier that knows URLSession
/// or AsyncHTTPClient.
///
/// A session asks its transport for one ``TransportTask`` per attempt. The task reports to its
/// ``TransportEventHandler`` in order: the response head, body chunks, upload progress, then
/// exactly one completion with the attempt's ``RequestMetrics``. Errors reach the handler as
/// `URLError`s on every transport, so retry policies read the same whichever one ran.
///
/// A transport follows no redirect: it reports a `3xx` as it is, with its body, and the request
/// follows it with a new task (see ``Redirect``), so that the rules, the handler and the limit
/// are the same over every transport.
///
/// Use ``URLSessionTransport`` (here) or `AsyncHTTPClientTransport` (in `CourierNIO`); implement
/// the protocol yourself to stub the network in tests.
public protocol Transport: Sendable {
    /// Makes a task for one attempt of `request`; it does nothing until resumed.
    ///
    /// - Parameters:
    ///   - request: What to send. Its `httpBody` is the body unless `body` is given.
    ///   - body: A body to read as it is sent (a file or a stream), in place of `request.httpBody`.
    ///     Open it once per attempt with ``RequestBody/openInputStream()`` (or
    ///     ``RequestBody/makeInputStream()`` when the consumer opens the stream itself, as Apple's
    ///     URLSession wants); when opening fails, complete with `URLError(.cannotOpenFile)`
    ///     carrying the thrown error under `NSUnderlyingErrorKey`. A head whose URL a session
    ///     has not checked (`RequestHead.isURLChecked`, SPI `CourierTransport`) is checked with
    ///     `URLValidation` first: a dependency may trap on a port above 65535.
    ///   - eventHandler: Receives what the task observes. Hold it strongly until the task has
    ///     reported its completion: it keeps the request in flight alive.
    func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask

    /// Makes a task for one attempt of the request `head` describes: what Courier calls. Implement
    /// it when your transport can send the parts as they are, so that no `URLRequest` is built
    /// (see ``RequestHead``). By default it calls the `URLRequest` form with
    /// ``RequestHead/urlRequest``.
    func makeTask(
        for head: RequestHead,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask

    /// Releases the transport's resources once its tasks have ended; tasks made afterwards fail
    /// with `URLError(.cancelled)`. Calling it again does nothing.
    func invalidate() async
}

/// One attempt in flight. Every method may be called from any thread, in any order, any number
/// of times; calls after completion do nothing.
public protocol TransportTask: AnyObject, Sendable {
    /// Starts the attempt, or continues it after ``suspend()``.
    func resume()
    /// Pauses the attempt: the transport stops reading the response (backpressure) until resumed.
    func suspend()
    /// Stops the attempt; it completes with `URLError(.cancelled)` unless it had already completed.
    func cancel()
}

/// Receives what a ``TransportTask`` observes. Calls for one task never overlap and arrive in order.
public protocol TransportEventHandler: AnyObject, Sendable {
    /// The response head arrived (a redirect's too: the transport follows none).
    func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse)
    /// The response head arrived, as its parts: a transport without a ready `HTTPURLResponse`
    /// calls this one, so that none is built unless needed (see ``ResponseHead``). By default it
    /// builds one and calls the `HTTPURLResponse` form.
    func transportTask(_ task: any TransportTask, didReceive head: ResponseHead)
    /// A piece of the response body arrived.
    func transportTask(_ task: any TransportTask, didReceive data: Data)
    /// Part of the request body was sent.
    func transportTask(_ task: any TransportTask, didSendBodyBytes totalBytesSent: Int64, of totalBytesExpected: Int64?)
    /// The attempt ended, with `error` (a `URLError`) if it failed. Called exactly once.
    func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics)
}

extension Transport {
    /// Calls the `URLRequest` form with the head's ``RequestHead/urlRequest``, for transports
    /// that only implement that one.
    public func makeTask(
        for head: RequestHead,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    ) -> any TransportTask {
        makeTask(for: head.urlRequest, body: body, eventHandler: eventHandler)
    }
}

extension TransportEventHandler {
    /// Builds the head's `HTTPURLResponse` and passes it to the `HTTPURLResponse` form, for
    /// handlers that only implement that one.
    public func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {
        guard let response = head.httpURLResponse else { return }
        transportTask(task, didReceive: response)
    }
}
