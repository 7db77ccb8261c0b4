import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Alamofire's async event streams: a request's hooks (`onURLRequestCreation`, `cURLDescription`,
// `onHTTPResponse`, progress) as async sequences that end when the request does. Each installs
// the hook it reads, replacing one set before, as Alamofire's do.
extension Request {
    /// Each attempt's request, once adapted, as an async sequence that ends when the request
    /// does: `for await urlRequest in request.urlRequests() { … }`. Installs an
    /// ``onURLRequestCreation(on:perform:)`` handler (replacing any set before).
    public func urlRequests(
        bufferingPolicy: AsyncStream<URLRequest>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<URLRequest> {
        eventStream(bufferingPolicy: bufferingPolicy) { queue, yield in
            onURLRequestCreation(on: queue, perform: yield)
        }
    }

    /// The request's `curl` command (credentials redacted), once it is made, as an async sequence
    /// that ends when the request does: one element at most, as in Alamofire.
    public func cURLDescriptions(
        bufferingPolicy: AsyncStream<String>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<String> {
        eventStream(bufferingPolicy: bufferingPolicy) { queue, yield in
            cURLDescription(on: queue, calling: yield)
        }
    }

    /// The response body's progress as an async sequence, as Alamofire names it; the same as
    /// ``downloadProgressUpdates(bufferingPolicy:)``. It keeps the newest 100 updates by default
    /// where Alamofire keeps all: a loop that stops reading during a long transfer must not
    /// make memory grow.
    public func downloadProgress(
        bufferingPolicy: AsyncStream<Progress>.Continuation.BufferingPolicy = .bufferingNewest(100)
    ) -> AsyncStream<Progress> {
        downloadProgressUpdates(bufferingPolicy: bufferingPolicy)
    }

    /// The request body's progress as an async sequence, as Alamofire names it; the same as
    /// ``uploadProgressUpdates(bufferingPolicy:)``, keeping the newest 100 updates by default.
    public func uploadProgress(
        bufferingPolicy: AsyncStream<Progress>.Continuation.BufferingPolicy = .bufferingNewest(100)
    ) -> AsyncStream<Progress> {
        uploadProgressUpdates(bufferingPolicy: bufferingPolicy)
    }

    /// A stream fed by the hook `install` sets, ended when the request finishes. The hook's
    /// elements and the end go through one serial queue, so the end never overtakes an element
    /// the hook handed on before the request finished.
    func eventStream<Element: Sendable>(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
        install: (DispatchQueue, @escaping @Sendable (Element) -> Void) -> Void
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: bufferingPolicy)
        let queue = DispatchQueue(label: "Courier.Request.eventStream")
        install(queue) { continuation.yield($0) }
        appendFinishHandler(resumingRequest: false) { queue.async { continuation.finish() } }
        return stream
    }
}

extension HTTPResponseHandling {
    /// Each attempt's response head as an async sequence that ends when the request does:
    /// `for await response in request.httpResponses() { … }`. The transfer does not wait for the
    /// loop. Installs a plain `onHTTPResponse(on:perform:)` handler (replacing any set before).
    public func httpResponses(
        bufferingPolicy: AsyncStream<HTTPURLResponse>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<HTTPURLResponse> {
        eventStream(bufferingPolicy: bufferingPolicy) { queue, yield in
            onHTTPResponse(on: queue, perform: yield)
        }
    }
}
