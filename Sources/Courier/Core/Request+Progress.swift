import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    // MARK: - Reading progress

    /// Progress of the response body: bytes received of the expected length (`-1` when unknown).
    public var downloadProgress: Progress {
        progress(\.progressObjects.download) { $0.downloadCounts }
    }

    /// Progress of the request body: bytes sent of the expected length (`-1` when unknown).
    public var uploadProgress: Progress {
        progress(\.progressObjects.upload) { ($0.bytesSent, $0.bytesExpectedToSend) }
    }

    /// The `Progress` at `object`, made on first read, brought up to date with `counts`.
    private func progress(
        _ object: WritableKeyPath<MutableState, Progress?>,
        counts: (MutableState) -> (completed: Int64, total: Int64)
    ) -> Progress {
        let (progress, (completed, total)) = mutableState.withLock { state in
            // No parent: a `Progress` made while another is current would attach to it.
            let progress = state[keyPath: object] ?? Progress(parent: nil, userInfo: nil)
            state[keyPath: object] = progress
            return (progress, counts(state))
        }
        // Outside the lock: on Apple platforms, setting these calls key-value observers.
        progress.totalUnitCount = total
        progress.completedUnitCount = completed
        return progress
    }

    // MARK: - Following progress

    /// The handler ``uploadProgress(queue:_:)`` set and the queue it runs on, as Alamofire's
    /// `uploadProgressHandler`; `nil` if none is set.
    public var uploadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        mutableState.withLock { $0.uploadReporter.handler }.map { ($0.handler, $0.queue) }
    }

    /// The handler ``downloadProgress(queue:_:)`` set and the queue it runs on, as Alamofire's
    /// `downloadProgressHandler`; `nil` if none is set.
    public var downloadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        mutableState.withLock { $0.downloadReporter.handler }.map { ($0.handler, $0.queue) }
    }

    /// Calls `handler` on `queue` as the response body arrives: with the total from
    /// `Content-Length` when known (else indeterminate), at most once per 1 % or 50 ms, and on
    /// success a last time at 1.0. A later call replaces the handler.
    @discardableResult
    public func downloadProgress(
        queue: DispatchQueue = .courierCallbacks,
        _ handler: @escaping @Sendable (Progress) -> Void
    ) -> Self {
        // The replaced handler is released after unlocking: what it captured may call the
        // request from its deinit.
        let replaced = mutableState.withLock { state in
            defer { state.downloadReporter.handler = (queue, handler) }
            return state.downloadReporter.handler
        }
        _ = replaced
        return self
    }

    /// Calls `handler` on `queue` as the request body is sent, as ``downloadProgress(queue:_:)`` does.
    @discardableResult
    public func uploadProgress(
        queue: DispatchQueue = .courierCallbacks,
        _ handler: @escaping @Sendable (Progress) -> Void
    ) -> Self {
        // The replaced handler is released after unlocking: what it captured may call the
        // request from its deinit.
        let replaced = mutableState.withLock { state in
            defer { state.uploadReporter.handler = (queue, handler) }
            return state.uploadReporter.handler
        }
        _ = replaced
        return self
    }

    /// The response body's progress as an async sequence, throttled as ``downloadProgress(queue:_:)``;
    /// it ends when the request does. Each element is a snapshot.
    ///
    /// ```swift
    /// for await progress in request.downloadProgressUpdates() { bar.update(progress.fractionCompleted) }
    /// ```
    public func downloadProgressUpdates(
        bufferingPolicy: AsyncStream<Progress>.Continuation.BufferingPolicy = .bufferingNewest(100)
    ) -> AsyncStream<Progress> {
        progressUpdates(bufferingPolicy: bufferingPolicy, reporter: \.downloadReporter)
    }

    /// The request body's progress as an async sequence, as ``downloadProgressUpdates(bufferingPolicy:)``.
    public func uploadProgressUpdates(
        bufferingPolicy: AsyncStream<Progress>.Continuation.BufferingPolicy = .bufferingNewest(100)
    ) -> AsyncStream<Progress> {
        progressUpdates(bufferingPolicy: bufferingPolicy, reporter: \.uploadReporter)
    }

    private func progressUpdates(
        bufferingPolicy: AsyncStream<Progress>.Continuation.BufferingPolicy,
        reporter: WritableKeyPath<MutableState, ProgressReporter> & Sendable
    ) -> AsyncStream<Progress> {
        let (stream, continuation) = AsyncStream<Progress>.makeStream(bufferingPolicy: bufferingPolicy)
        let isOver = mutableState.withLock { state -> Bool in
            if state.machine.hasFinished { return true }
            state[keyPath: reporter].streams.append(continuation)
            return false
        }
        if isOver { continuation.finish() }
        return stream
    }

    // MARK: - Reporting (called by subclasses)

    /// Records that `attempt` has sent `totalBytesSent` of its body, if it is the current one, and reports it.
    func recordBodyBytesSent(by attempt: Attempt, totalBytesSent: Int64, of totalBytesExpected: Int64?) {
        let isCurrent = mutableState.withLock { state -> Bool in
            guard state.attempt === attempt else { return false }
            state.bytesSent = totalBytesSent
            state.bytesExpectedToSend = totalBytesExpected ?? -1
            return true
        }
        if isCurrent { reportUploadProgress() }
    }

    /// Records a custom request's progress (its delegate's fraction, 0…1) if `attempt` is the
    /// current one, and reports it unless told not to. It never goes back within an attempt; a
    /// retry starts again from nothing, as byte progress does.
    func recordOperationProgress(_ fraction: Double, by attempt: Attempt?, reports: Bool = true) {
        let isCurrent = mutableState.withLock { state -> Bool in
            guard let attempt, state.attempt === attempt else { return false }
            state.operationProgress = max(state.operationProgress ?? 0, fraction)
            return true
        }
        if isCurrent, reports { reportDownloadProgress() }
    }

    /// Reports the response body's progress, if the throttle lets it through.
    func reportDownloadProgress() {
        report(\.downloadReporter, progress: { $0.downloadCounts }, isFinal: false)
    }

    /// Reports the request body's progress, if the throttle lets it through.
    func reportUploadProgress() {
        report(\.uploadReporter, progress: { ($0.bytesSent, $0.bytesExpectedToSend) }, isFinal: false)
    }

    private func report(
        _ reporter: WritableKeyPath<MutableState, ProgressReporter>,
        progress: (MutableState) -> (completed: Int64, total: Int64),
        isFinal: Bool
    ) {
        let update = mutableState.withLock { state -> (ProgressReporter, Int64, Int64)? in
            // Most requests have no listener: no clock read for them, per piece of body.
            guard state[keyPath: reporter].hasListeners else { return nil }
            let now = DispatchTime.now().uptimeNanoseconds
            let (completed, total) = progress(state)
            guard
                state[keyPath: reporter].shouldReport(
                    completed: completed,
                    total: total,
                    nanoseconds: now,
                    isFinal: isFinal
                )
            else { return nil }
            return (state[keyPath: reporter], completed, total)
        }
        guard let (listeners, completed, total) = update else { return }
        Self.deliver(completed: completed, total: total, to: listeners)
    }

    private static func deliver(completed: Int64, total: Int64, to listeners: ProgressReporter) {
        let snapshot = Progress(totalUnitCount: total)
        snapshot.completedUnitCount = completed
        if let (queue, handler) = listeners.handler { queue.async { handler(snapshot) } }
        listeners.streams.forEach { $0.yield(snapshot) }
    }

    /// Once finished: on success a last update at 1.0 (the total is then what was transferred,
    /// even if unknown before), then the listeners are let go and the sequences end.
    /// The last progress to report as the request finishes, taken under the lock with the rest of
    /// what finishing takes; `nil` when nobody listens (most requests).
    struct FinalProgress {
        let succeeded: Bool
        let download: (reporter: ProgressReporter, received: Int64)
        let upload: (reporter: ProgressReporter, sent: Int64?)
    }

    /// Under the lock: takes the listeners of both directions for ``finishProgress(_:)``, leaving
    /// none behind, or `nil` when there are none.
    static func takeFinalProgress(_ state: inout MutableState) -> FinalProgress? {
        guard state.downloadReporter.hasListeners || state.uploadReporter.hasListeners else { return nil }
        defer {
            state.downloadReporter = ProgressReporter()
            state.uploadReporter = ProgressReporter()
        }
        // Only a request that sent a body reports upload progress.
        let sentBody = state.bytesSent > 0 || state.bytesExpectedToSend > 0
        return FinalProgress(
            succeeded: state.error == nil,
            download: (state.downloadReporter, state.bytesReceived),
            upload: (state.uploadReporter, sentBody ? state.bytesSent : nil)
        )
    }

    /// After the lock, before any response handler: the last update (1.0 on success), and the
    /// end of every progress sequence.
    func finishProgress(_ final: FinalProgress) {
        let (download, upload) = (final.download, final.upload)
        if final.succeeded, download.reporter.hasListeners {
            // An empty body is complete too: 1 of 1.
            Self.deliver(completed: max(download.received, 1), total: max(download.received, 1), to: download.reporter)
        }
        if final.succeeded, upload.reporter.hasListeners, let sent = upload.sent {
            Self.deliver(completed: max(sent, 1), total: max(sent, 1), to: upload.reporter)
        }
        download.reporter.streams.forEach { $0.finish() }
        upload.reporter.streams.forEach { $0.finish() }
    }
}
