import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport of Courier's own that works on a ``RequestHead`` and hands what it sends to
/// another (`base`): the cache, the trust settings. A `URLRequest` is read as its head; one
/// without a URL goes to `base` as it is, which fails it.
protocol WrappingTransport: Transport {
    /// The transport that sends what this one passes on.
    var base: any Transport { get }
}

extension WrappingTransport {
    func makeTask(
        for request: URLRequest,
        body: RequestBody?,
        eventHandler: any TransportEventHandler
    )
        -> any TransportTask
    {
        guard let head = RequestHead(request) else {
            return base.makeTask(for: request, body: body, eventHandler: eventHandler)
        }
        return makeTask(for: head, body: body, eventHandler: eventHandler)
    }

    func invalidate() async {
        await base.invalidate()
    }
}
