import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// One attempt's link from the transport to its request: the transport reports to it, and
    /// it hands each event to the request, which acts on it only while this is the current
    /// attempt. A late event of an earlier attempt, or of one that was cancelled, finds another
    /// attempt current (or none) and is dropped.
    ///
    /// The transport holds it, and through it the request, until the attempt completes: a
    /// request in flight stays alive even when nobody else holds it. The request is not a
    /// ``TransportEventHandler`` itself, so nothing outside Courier can feed it events.
    final class Attempt: TransportEventHandler {
        let request: Request

        init(request: Request) {
            self.request = request
        }

        func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse) {
            request.attempt(self, of: task, didReceive: ResponseHead(response))
        }

        func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {
            request.attempt(self, of: task, didReceive: head)
        }

        func transportTask(_ task: any TransportTask, didReceive data: Data) {
            request.attempt(self, of: task, didReceive: data)
        }

        func transportTask(
            _ task: any TransportTask,
            didSendBodyBytes totalBytesSent: Int64,
            of totalBytesExpected: Int64?
        ) {
            request.recordBodyBytesSent(by: self, totalBytesSent: totalBytesSent, of: totalBytesExpected)
        }

        func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics) {
            request.attempt(self, of: task, didCompleteWith: error, metrics: metrics)
        }
    }
}
