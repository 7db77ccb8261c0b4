import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// @unchecked Sendable: its own mutable state sits in `uploadState`, behind one lock; the rest is
// Request's, behind Request's lock.
/// A ``DataRequest`` that sends a body from memory, a file, a stream or a multipart form, read in
/// chunks as it is sent; its response is collected and serialized like any data request's.
///
/// Make one with `Session.upload(_:to:)`
/// and its siblings. Follow the upload with ``Request/uploadProgress(queue:_:)``. The body is
/// made once, before the first attempt (a large multipart form is encoded to a temporary file
/// then, off the caller's thread, and the file is removed when the request finishes); each
/// attempt reads it from the start, so a retry resends all of it. A body that can be read only
/// once (an `InputStream` you pass in) is never retried.
public final class UploadRequest: DataRequest, @unchecked Sendable {
    /// What an upload sends, as made by its maker before the first attempt.
    struct MadeBody: Sendable {
        let body: RequestBody
        /// A file Courier wrote for this request (an encoded multipart form), removed when it finishes.
        let temporaryFile: URL?
    }

    private struct UploadState {
        var uploadable: MadeBody?
        var isFinished = false
    }

    /// Makes the body; may take long (encoding a multipart form) and may fail.
    private let makeUploadable: @Sendable () throws -> MadeBody
    /// Whether making the body writes a file, so it should not run on the caller's thread.
    let makesUploadableSlowly: Bool
    private let uploadState = Protected(UploadState())

    /// A new upload of the same body, not yet started, as ``DataRequest/repeated()``: the body is
    /// made again (a multipart form is encoded again). A file passed as
    /// ``Uploadable/file(_:shouldRemove:)`` with `true` was removed when this upload finished, so
    /// its repeat fails with ``CourierError/Kind/createUploadableFailed``.
    public override func repeated() -> UploadRequest {
        let again = sessionForRepeat.upload(
            with: convertible,
            interceptor: creationInterceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            makesUploadableSlowly: makesUploadableSlowly,
            makeUploadable: makeUploadable
        )
        copySettings(to: again)
        return again
    }

    init(
        convertible: any URLRequestConvertible,
        makesUploadableSlowly: Bool,
        makeUploadable: @escaping @Sendable () throws -> MadeBody,
        fileManager: FileManager,
        maximumBodySize: Int?,
        serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?,
        session: Session
    ) {
        self.makesUploadableSlowly = makesUploadableSlowly
        self.makeUploadable = makeUploadable
        self.fileManager = fileManager
        super.init(
            convertible: convertible,
            maximumBodySize: maximumBodySize,
            serializationQueue: serializationQueue,
            eventMonitor: eventMonitor,
            interceptor: interceptor,
            session: session
        )
        appendFinishHandler(resumingRequest: false) { [uploadState] in
            let file = uploadState.withLock { state -> URL? in
                state.isFinished = true
                return state.uploadable?.temporaryFile
            }
            // Not on the transport's thread, where a request may finish.
            if let file { DispatchQueue.global(qos: .utility).async { try? fileManager.removeItem(at: file) } }
        }
    }

    /// Removes the files this request was told it may remove (an encoded multipart form, or a
    /// file passed as ``Uploadable/file(_:shouldRemove:)`` with `true`) when it finishes.
    public let fileManager: FileManager

    /// The body being sent, once it has been made (before the first attempt).
    public var uploadable: RequestBody? { uploadState.withLock { $0.uploadable?.body } }

    /// The body, made on first use. Throws ``CourierError/Kind/createUploadableFailed`` or
    /// ``CourierError/Kind/multipartEncodingFailed`` when it cannot be made.
    func uploadableBody() throws -> RequestBody {
        if let made = uploadState.withLock({ $0.uploadable }) { return made.body }
        let made: MadeBody
        do {
            made = try makeUploadable()
        } catch {
            let failure = (error as? CourierError) ?? .createUploadableFailed(error)
            // Not for a request that ended meanwhile (cancelled while a form was encoded).
            if !uploadState.withLock({ $0.isFinished }) {
                monitor?.request(self, didFailToCreateUploadableWithError: failure)
            }
            throw failure
        }
        let (body, stale, isNew) = uploadState.withLock { state -> (RequestBody, URL?, Bool) in
            if let existing = state.uploadable { return (existing.body, made.temporaryFile, false) }
            state.uploadable = made
            // Finished (cancelled) while the body was made: nobody will remove its file later,
            // and no monitor hears of a body that is gone.
            return (made.body, state.isFinished ? made.temporaryFile : nil, !state.isFinished)
        }
        if let stale { try? fileManager.removeItem(at: stale) }
        if isNew { monitor?.request(self, didCreateUploadable: body) }
        return body
    }

    override var canRetry: Bool { uploadable?.isReplayable ?? true }
}
