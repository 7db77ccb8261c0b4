import Foundation

/// A task that sends nothing and fails with `error` once it is resumed or cancelled: what a
/// transport hands out when it can no longer make real tasks (a `URLSession` being invalidated,
/// which FoundationNetworking answers with a crash rather than an error).
final class FailedTransportTask: TransportTask, Sendable {
    private let error: URLError
    private let handler: Protected<(any TransportEventHandler)?>

    init(error: URLError, eventHandler: any TransportEventHandler) {
        self.error = error
        self.handler = Protected(eventHandler)
    }

    func resume() { fail() }
    func suspend() {}
    func cancel() { fail() }

    /// Reports the failure the first time only, never on the caller's thread (the caller may
    /// hold a lock its handler takes).
    private func fail() {
        guard
            let handler = handler.withLock({ handler in
                defer { handler = nil }
                return handler
            })
        else { return }
        let error = self.error
        DispatchQueue.global().async { [self] in
            let now = Date()
            handler.transportTask(self, didCompleteWith: error, metrics: RequestMetrics(startDate: now, endDate: now))
        }
    }
}
