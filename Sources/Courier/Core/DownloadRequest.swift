import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// @unchecked Sendable: its own mutable state sits in `transfer`, behind one lock, and the file is
// confined to its queue; the rest is Request's, behind Request's lock.
/// A request whose response body streams to a file on disk, in constant memory, and is moved to
/// its destination once complete and valid.
///
/// ```swift
/// let destination = DownloadRequest.suggestedDownloadDestination(in: folder, options: .removePreviousFile)
/// let fileURL = try await session.download(url, to: destination).validate().serializingDownloadedFileURL().value
/// ```
///
/// The body goes to a temporary file as it arrives (written off the transport's threads; when
/// the disk falls behind, the transfer pauses rather than buffer). When the last byte is in and
/// validation passes, the file is renamed to the ``Destination``: a failed, cancelled or
/// truncated download never appears there. With a retrier, a response serializer's failure is
/// offered to it once the file is in place, as Alamofire does: that file stays there if the
/// retrier retries (the next move replaces it with `.removePreviousFile`), though the download
/// no longer reports it.
///
/// Interrupted downloads resume: ``cancel(producingResumeData:)`` (or a dropped connection)
/// leaves ``resumeData`` (see ``DownloadResumeData``) for ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``,
/// and a retry after a dropped connection continues where it stopped, when the server supports
/// ranges. Either way the request carries `Range` and `If-Range`; a server whose file changed
/// answers `200` and the download starts over, and a `416` starts over too.
public final class DownloadRequest: Request, @unchecked Sendable {
    /// What the current attempt's response means for the file.
    private enum Disposition {
        /// Write the body after the bytes kept.
        case write
        /// The server refused the range (416) or sent another one: discard the body, start over.
        case startOver
        /// A resumed attempt got neither `200` nor `206` (a `503`, say): its body is not the
        /// file's, so it is dropped and the partial file stays as it was, for a later resume.
        case discard
    }

    private struct Transfer {
        /// The bytes of the file the next attempt continues after, with a `Range`; 0 starts over.
        var resumeOffset: Int64 = 0
        var entityTag: String?
        var lastModified: String?
        var acceptsRanges = false
        /// The whole body's length, when the server said.
        var expectedLength: Int64?
        /// The offset the current attempt's `Range` asked for.
        var requestedOffset: Int64?
        var disposition = Disposition.write
        /// Bytes handed to the file queue and not yet written.
        var pendingBytes: Int64 = 0
        /// The batch whose write is queued but has not taken its bytes yet; new pieces join it.
        var openBatch: WriteBatch?
        var isHoldingBack = false
        var producesResumeData = false
        var resumeData: Data?
        var fileURL: URL?
    }

    /// Pause the transfer when this much is waiting to be written; continue below the low mark.
    private static let highWaterMark: Int64 = 8 << 20
    private static let lowWaterMark: Int64 = 2 << 20

    /// Where the finished file goes; `nil` leaves it at its temporary URL.
    public let destination: Destination?
    /// The file the body is written to while the download runs: in `CourierDownloads-<uid>` of
    /// the temporary directory, a folder only the user may enter (mode 0700, made so if it is
    /// ours and was not; refused with ``CourierError/Kind/downloadFileWriteFailed`` if it is a
    /// link or someone else's), with mode 0600, which the file keeps when moved to its destination.
    public var temporaryURL: URL { file.url }
    let file: DownloadFile
    private let transfer: Protected<Transfer>

    /// What a download was made from, as Alamofire's `DownloadRequest.Downloadable`.
    public enum Downloadable: Sendable {
        /// A request to send.
        case request(any URLRequestConvertible)
        /// Resume data to continue from (``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``).
        case resumeData(Data)
    }

    /// What this download was made from.
    public let downloadable: Downloadable

    /// A new download of the same URLRequest to the same destination, not yet started, as
    /// ``DataRequest/repeated()``. It starts from the first byte, even if this download was
    /// resumed from resume data: use ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``
    /// with ``resumeData`` to continue instead.
    public func repeated() -> DownloadRequest {
        let again = sessionForRepeat.download(
            convertible,
            interceptor: creationInterceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            to: destination
        )
        copySettings(to: again)
        return again
    }

    init(
        convertible: any URLRequestConvertible,
        downloadable: Downloadable? = nil,
        destination: Destination?,
        resumingFrom resumeData: DownloadResumeData?,
        serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?,
        session: Session
    ) {
        self.destination = destination
        self.downloadable = downloadable ?? .request(convertible)
        // The request's own serialization queue, made now rather than on first use: the file is
        // written on it too, so a finished download is validated, moved, settled and serialized
        // there, one block after another, with no hop between queues.
        let queue = DispatchQueue(label: "Courier.Request.serialization", target: serializationQueue)
        var transfer = Transfer()
        if let resumeData {
            let url = URL(fileURLWithPath: resumeData.temporaryFilePath)
            // What the file really holds bounds where the download continues.
            let onDisk =
                (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)??
                .int64Value ?? 0
            let kept = min(onDisk, resumeData.bytesReceived)
            file = DownloadFile(url: url, existingLength: kept, queue: queue)
            transfer.resumeOffset = kept
            transfer.entityTag = resumeData.entityTag
            transfer.lastModified = resumeData.lastModified
            transfer.acceptsRanges = true
            transfer.expectedLength = resumeData.expectedLength
        } else {
            file = DownloadFile.makeTemporary(queue: queue)
        }
        // One lock for the request's state and the transfer's: holding the transfer back must
        // change both at once (see `attempt(_:of:didReceive:)`).
        let lock = Lock.make()
        self.transfer = Protected(transfer, lock: lock)
        super.init(
            convertible: convertible,
            serializationQueue: serializationQueue,
            eventMonitor: eventMonitor,
            interceptor: interceptor,
            session: session,
            lock: lock
        )
        mutableState.withLock { $0.serializationQueue = queue }
        // Runs before any response handler (which also waits for the file queue), so handlers
        // see the file closed, moved or removed, and the resume data made.
        appendFinishHandler(resumingRequest: false) { [weak self] in
            guard let self else { return }
            file.queue.async { self.closeFileAfterFinishing() }
        }
    }

    // MARK: - Reading

    /// Where the downloaded file is, once the download has succeeded and been moved.
    public var fileURL: URL? { transfer.withLock { $0.fileURL } }

    /// Data to continue this download with ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``:
    /// made when the request is cancelled with ``cancel(producingResumeData:)`` or fails on the
    /// network with part of the body on disk. Available to response handlers (in
    /// ``DownloadResponse/resumeData``), and here once they run.
    public var resumeData: Data? { transfer.withLock { $0.resumeData } }

    // MARK: - Cancelling

    /// Cancels the download; with `producingResumeData`, keeps the partial file and makes
    /// ``resumeData`` for it.
    @discardableResult
    public func cancel(producingResumeData: Bool) -> Self {
        if producingResumeData { transfer.withLock { $0.producesResumeData = true } }
        return cancel()
    }

    /// Cancels the download, keeps the partial file, and calls `completionHandler` on `queue`
    /// with the resume data (or `nil` if nothing had been received).
    @discardableResult
    public func cancel(
        byProducingResumeData completionHandler: @escaping @Sendable (_ data: Data?) -> Void,
        queue: DispatchQueue = .courierCallbacks
    ) -> Self {
        cancel(producingResumeData: true)
        appendFinishHandler(resumingRequest: false) { [file, transfer] in
            file.queue.async {
                let data = transfer.withLock { $0.resumeData }
                queue.async { completionHandler(data) }
            }
        }
        return self
    }

    // MARK: - Attempts

    /// Adds `Range` and `If-Range` when the file holds part of the body and the server can be
    /// asked for the rest safely (it takes ranges and gave a validator).
    override func finalizing(_ head: RequestHead) -> RequestHead {
        // A caller who asked for a range of their own gets exactly that.
        let callerSetRange = head.headers.value(for: "Range") != nil
        let resume = transfer.withLock { transfer -> (offset: Int64, validator: String)? in
            transfer.requestedOffset = nil
            transfer.disposition = .write
            guard !callerSetRange else { return nil }
            // A weak entity tag cannot go in If-Range (RFC 9110 13.1.5); a date can.
            let strongTag = transfer.entityTag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
            guard transfer.resumeOffset > 0, transfer.acceptsRanges,
                let validator = strongTag ?? transfer.lastModified
            else { return nil }
            transfer.requestedOffset = transfer.resumeOffset
            return (transfer.resumeOffset, validator)
        }
        guard let resume else { return head }
        var head = head
        head.setHeader("bytes=\(resume.offset)-", for: "Range")
        head.setHeader(resume.validator, for: "If-Range")
        return head
    }

    override func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive head: ResponseHead) {
        // A late head (the request was cancelled meanwhile) must not touch the file.
        let isCurrent = mutableState.withLock { $0.attempt === attempt && !$0.machine.hasFinished }
        guard isCurrent else { return }
        let status = head.statusCode
        let range = ContentRange(head.value(forHTTPHeaderField: "Content-Range"))
        let contentLength = head.expectedContentLength >= 0 ? head.expectedContentLength : nil
        let (kept, expected) = transfer.withLock { transfer -> (Int64?, Int64?) in
            // This attempt's body goes after the file is opened for it, never into an earlier batch.
            transfer.openBatch = nil
            let kept = Self.decide(&transfer, status: status, range: range, contentLength: contentLength)
            if status == 200 || status == 206 {
                transfer.entityTag = head.value(forHTTPHeaderField: "ETag")
                transfer.lastModified = head.value(forHTTPHeaderField: "Last-Modified")
                transfer.acceptsRanges =
                    status == 206
                    || head.value(forHTTPHeaderField: "Accept-Ranges")?.lowercased().contains("bytes") == true
            }
            return (kept, transfer.expectedLength)
        }
        let stillCurrent = mutableState.withLock { state -> Bool in
            guard state.attempt === attempt else { return false }
            state.responseHead = head
            state.bytesReceived = kept ?? 0
            state.bytesExpected = kept == nil ? -1 : expected ?? -1
            return true
        }
        guard stillCurrent else { return }
        if let kept { file.queue.async { [file] in file.open(keepingBytes: kept) } }
        monitor?.request(self, didReceive: head)
    }

    /// What a response head means for the file: the bytes to keep before its body, or `nil` when
    /// its body is not written (it stays as it was). Records the disposition and the length.
    private static func decide(
        _ transfer: inout Transfer,
        status: Int,
        range: ContentRange?,
        contentLength: Int64?
    ) -> Int64? {
        guard let offset = transfer.requestedOffset else {
            transfer.expectedLength = status == 200 ? contentLength : nil
            return 0
        }
        switch status {
        case 206 where range?.start == offset:
            let (total, overflow) = (contentLength ?? 0).addingReportingOverflow(offset)
            transfer.expectedLength = range?.completeLength ?? (contentLength == nil || overflow ? nil : total)
            return offset
        case 206, 416:
            transfer.disposition = .startOver
            return nil
        case 200:
            // The file changed (If-Range failed) or ranges are not served: the body is all of it.
            transfer.expectedLength = contentLength
            return 0
        default:
            transfer.disposition = .discard
            return nil
        }
    }

    override func attempt(_ attempt: Attempt, of task: any TransportTask, didReceive data: Data) {
        let isCurrent = mutableState.withLock { state -> Bool in
            guard state.attempt === attempt, !state.machine.hasFinished else { return false }
            state.bytesReceived += Int64(data.count)
            return true
        }
        guard isCurrent else { return }
        announceBodyPiece(data.count)
        // Pieces join the batch a queued block has not taken yet, so a fast network costs one
        // block on the file queue per batch rather than one per 16 KB piece.
        let (newBatch, holdBack) =
            transfer.withLock(together: mutableState) { transfer, state -> (WriteBatch?, Bool)? in
                guard case .write = transfer.disposition else { return nil }
                transfer.pendingBytes += Int64(data.count)
                var newBatch: WriteBatch?
                if let batch = transfer.openBatch {
                    batch.pieces.append(data)
                } else {
                    newBatch = WriteBatch(data)
                    transfer.openBatch = newBatch
                }
                // A transport that cannot pause (URLSession on Linux) would only hold the pieces
                // in memory instead, up to its limit and then fail: the file keeps taking them.
                guard !transfer.isHoldingBack, transfer.pendingBytes > Self.highWaterMark,
                    Self.canHoldBack(task)
                else {
                    return (newBatch, false)
                }
                transfer.isHoldingBack = true
                _ = state.machine.holdBack(true, for: .consumer)
                return (newBatch, true)
            } ?? (nil, false)
        if holdBack { applyStateToTask() }
        if let newBatch { file.queue.async { [self] in write(newBatch) } }
        reportDownloadProgress()
    }

    /// Whether suspending `task` holds its transfer back on the network, rather than holding its
    /// events in memory.
    private static func canHoldBack(_ task: any TransportTask) -> Bool {
        URLSessionTransport.suspensionPauses(task)
    }

    /// On the file queue: writes what `batch` gathered, then releases the transfer if the writes
    /// have caught up.
    private func write(_ batch: WriteBatch) {
        let pieces = transfer.withLock { transfer -> [Data] in
            // Closed: later pieces start a batch (and a block) of their own.
            if transfer.openBatch === batch { transfer.openBatch = nil }
            defer { batch.pieces = [] }
            return batch.pieces
        }
        var written: Int64 = 0
        for piece in pieces {
            file.write(piece)
            written += Int64(piece.count)
        }
        let release = transfer.withLock(together: mutableState) { transfer, state -> Bool in
            transfer.pendingBytes -= written
            guard transfer.isHoldingBack, transfer.pendingBytes < Self.lowWaterMark else { return false }
            transfer.isHoldingBack = false
            _ = state.machine.holdBack(false, for: .consumer)
            return true
        }
        if release { applyStateToTask() }
    }

    override func attempt(
        _ attempt: Attempt,
        of task: any TransportTask,
        didCompleteWith error: URLError?,
        metrics: RequestMetrics
    ) {
        guard recordAttemptCompletion(of: attempt, metrics: metrics) else { return }
        // Behind every write of this attempt.
        file.queue.async { [self] in
            attemptDidComplete(error: error.map(CourierError.attemptFailed), metrics: metrics)
        }
    }

    /// On the file queue, with the attempt's bytes all written: retry, start over, or validate.
    private func attemptDidComplete(error: CourierError?, metrics: RequestMetrics) {
        let fileLength = file.length
        let writeError = file.writeError
        let (startsOver, bodyWasDiscarded) = transfer.withLock { transfer -> (Bool, Bool) in
            // What is on disk is what a retry continues from, if the server can be asked for the rest.
            transfer.resumeOffset = fileLength
            switch transfer.disposition {
            case .startOver:
                transfer.resumeOffset = 0
                return (true, false)
            case .discard:
                return (false, true)
            case .write:
                return (false, false)
            }
        }
        if let writeError {
            let failure = CourierError.downloadFileWriteFailed(writeError)
            monitor?.request(self, didCompleteAttemptWith: metrics, error: failure)
            finish(error: failure)
            return
        }
        monitor?.request(self, didCompleteAttemptWith: metrics, error: error)
        if let error {
            retryOrFinish(error: error)
            return
        }
        if startsOver {
            startOver()
            return
        }
        // Already on the serialization queue (the file's): validators run here, then the move.
        let validationError = runValidators()
        monitor?.request(self, didValidateWithError: validationError)
        guard validationError == nil else {
            // A rejected body must not be continued; a dropped one left the file as it was.
            if !bodyWasDiscarded { transfer.withLock { $0.resumeOffset = 0 } }
            retryOrFinish(error: validationError)
            return
        }
        moveToDestination()
    }

    /// The server could not serve the rest: one more attempt, for the whole body.
    private func startOver() {
        // Read before locking: the strong reference `weakSession` makes for a moment could be the
        // session's last, and its deinit (cancelling this request) must not run under the lock.
        let sessionExists = weakSession != nil
        let (isRunning, retryCount, hasSession) = mutableState.withLock {
            ($0.machine.awaitRetryDecision(), $0.retryCount, $0.session != nil || sessionExists)
        }
        guard isRunning else { return }
        guard hasSession else {
            finish(error: .sessionInvalidated(nil))
            return
        }
        retryNow(endingWaitFor: retryCount)
    }

    /// On the file queue: moves the complete file to the destination, then finishes.
    private func moveToDestination() {
        file.close()
        // From here a cancel cannot undo the move: the request is committed to finishing with
        // it. Cancelled before: the file never reaches the destination.
        guard let head = responseHead, beginCommitting() else { return }
        guard let destination else {
            transfer.withLock { $0.fileURL = file.url }
            monitor?.request(self, didFinishDownloadingWith: .success(file.url))
            finishDownloaded()
            return
        }
        // Built only here, for the destination, which is given one; without a destination none is.
        guard let response = head.httpURLResponse else {
            finish(error: .invalidResponse(reason: "the response head could not be read as an HTTPURLResponse"))
            return
        }
        let (destinationURL, options) = destination(file.url, response)
        monitor?.request(self, didCreateDestinationURL: destinationURL)
        do {
            try Self.moveFile(from: file.url, to: destinationURL, options: options)
            transfer.withLock { $0.fileURL = destinationURL }
            monitor?.request(self, didFinishDownloadingWith: .success(destinationURL))
            finishDownloaded()
        } catch {
            let failure = CourierError.downloadedFileMoveFailed(
                error: error,
                source: file.url,
                destination: destinationURL
            )
            monitor?.request(self, didFinishDownloadingWith: .failure(failure))
            finish(error: failure)
        }
    }

    /// The file is in place: the serializers' failures go to the retriers, then the download
    /// finishes. It stays committed meanwhile: a cancel or the deadline finishes it as it is (a
    /// file in place is never reported cancelled) and stops the retry. A retry downloads the
    /// whole body again; the rejected file stays where it was moved, as in Alamofire.
    private func finishDownloaded() {
        checkSerializersThenFinish(input: { [self] in outcome() })
    }

    override func didPrepareRetry() {
        // Only a retry after the file was put in place (its serializers failed) finds a file URL.
        // That file is the rejected attempt's: the next one downloads the whole body afresh, and
        // until it is in place the download has no file (nor reads one as moved when it ends).
        let hadFile = transfer.withLock { transfer -> Bool in
            guard transfer.fileURL != nil else { return false }
            transfer.fileURL = nil
            transfer.resumeOffset = 0
            return true
        }
        guard hadFile else { return }
        // The temporary file starts empty again, before the next attempt's head can open it: a
        // failure before that head must not read the rejected body as bytes to resume after. A
        // file moved to a destination stays there, as in Alamofire (the next move replaces it
        // with `.removePreviousFile`): another download may have put its own file there since.
        file.queue.async { [file] in file.remove() }
    }

    /// On the file queue, once finished: a moved file is left alone; a partial one is kept with
    /// resume data when asked for (or after a network failure), and removed otherwise.
    private func closeFileAfterFinishing() {
        file.retire()
        let requestError = error
        let lastHead = requestHead
        // A file in place and an error: a serializer's failure led to a retry, and the request
        // ended (a cancel, say) before that retry let go of the rejected file. It is not this
        // download's result, nor worth resuming.
        let heldRejectedFile = transfer.withLock { transfer -> Bool in
            guard requestError != nil, transfer.fileURL != nil else { return false }
            transfer.fileURL = nil
            return true
        }
        if heldRejectedFile {
            file.remove()
            return
        }
        let keeps = transfer.withLock { transfer -> Bool in
            guard transfer.fileURL == nil, file.length > 0, let lastHead else { return false }
            // Worth resuming: the file holds the start of the body and the server takes ranges,
            // and the transfer broke off (not a body the request rejected).
            // Stopped by the network, a timeout or the deadline: what arrived is worth keeping.
            // (Not when the session goes away: its owner is shutting down and would never read
            // the resume data, so the partial file would be left behind.)
            let interrupted =
                requestError?.kind == .transportFailed
                || (requestError?.kind == .responseValidationFailed && transfer.disposition == .discard)
            guard transfer.producesResumeData || (interrupted && transfer.acceptsRanges) else { return false }
            var request = lastHead.urlRequest
            request.setValue(nil, forHTTPHeaderField: "Range")
            request.setValue(nil, forHTTPHeaderField: "If-Range")
            transfer.resumeData = try? DownloadResumeData(
                request: request,
                bytesReceived: file.length,
                temporaryFilePath: file.url.path,
                entityTag: transfer.entityTag,
                lastModified: transfer.lastModified,
                expectedLength: transfer.expectedLength
            ).encoded()
            return transfer.resumeData != nil
        }
        if !keeps, fileURL == nil { file.remove() }
    }
}
