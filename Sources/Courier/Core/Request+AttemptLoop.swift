import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The request's own attempt loop: build the head (for every attempt), adapt it, send it. What comes back goes
// through ``Request/Attempt`` to the request's transport events, then validation, the retry
// decision and its delay (`Request.swift`), and back here for the next attempt. The session only
// lends what it owns: its headers and checks (`makeInitialHead`), its interceptor, its transport,
// its budget and its clock.
extension Request {
    /// Starts the attempt the state machine is waiting for (the first, on resume; the next, once
    /// a retry is decided), unless none is due: called twice, or too late, it does nothing.
    func startAttempt() {
        let (isDue, initialRequest, ownInterceptor) = attemptToStart
        guard isDue else { return }
        let requestQueue = weakSession?.requestQueue
        let upload = self as? UploadRequest
        let encodesFirst = upload.map { $0.makesUploadableSlowly && $0.uploadable == nil } ?? false
        // The usual first attempt starts here and now, with no closure made for it.
        guard requestQueue != nil || initialRequest != nil || encodesFirst else {
            prepareAttempt(initialRequest: initialRequest, ownInterceptor: ownInterceptor)
            return
        }
        let prepare: @Sendable () -> Void = { [self] in
            prepareAttempt(initialRequest: initialRequest, ownInterceptor: ownInterceptor)
        }
        if let upload, encodesFirst {
            // Encoding a large multipart form writes a file: not on the caller's thread.
            (requestQueue ?? DispatchQueue.global(qos: .utility)).async {
                do {
                    _ = try upload.uploadableBody()
                } catch {
                    // Reported to monitors as the uploadable's failure, once (as in Alamofire).
                    upload.finish(error: (error as? CourierError) ?? .createUploadableFailed(error))
                    return
                }
                prepare()
            }
            return
        }
        if let requestQueue {
            requestQueue.async(execute: prepare)
        } else {
            // A retry runs the caller's code again (`asURLRequest()`, encoders, the modifier): not
            // on the queue or task that decided the retry, which may be Courier's own.
            Task { prepare() }
        }
    }

    /// Builds the head of this attempt from the caller's parameters, adapts it, then sends it.
    /// Every attempt builds afresh, as in Alamofire (`asURLRequest()`, the request modifier, then
    /// the adapters), so a retry sees what changed since: a rotated key, a new timestamp. The
    /// first build also counts the request in the retry budget and arms the deadline.
    private func prepareAttempt(initialRequest: RequestHead?, ownInterceptor: (any RequestInterceptor)?) {
        guard let session = weakSession else {
            finish(error: .sessionInvalidated(nil))
            return
        }
        if let customOperation {
            prepareCustomAttempt(customOperation, isFirst: initialRequest == nil, session: session)
            return
        }
        var initial: RequestHead
        do {
            initial = try session.makeInitialHead(from: convertible)
        } catch {
            didFailToCreateURLRequest(with: (error as? CourierError) ?? .parameterEncodingFailed(error))
            return
        }
        // An upload's body is its uploadable; one left in the caller's URLRequest is not sent, so
        // no adapter (a compressor, a signer) or cURL description may take it for the body.
        if self is UploadRequest { initial.removeBody() }
        guard didCreateInitialRequest(initial) else { return }
        if initialRequest == nil { didStartFirstAttempt(session: session) }
        guard let adapter = session.interceptor(combining: ownInterceptor), Session.adapts(adapter) else {
            perform(initial, isAdapted: false, session: session)
            return
        }
        let state = RequestAdapterState(requestID: id, retryCount: retryCount, session: session)
        setPendingWork(
            Task { [self] in
                let adapted: URLRequest
                do {
                    adapted = try await adapter.adapt(initial.urlRequest, using: state)
                } catch {
                    // Always wrapped, even a CourierError, as Alamofire does: the kind says the
                    // adapter failed, `underlyingError` says why.
                    didFailToAdaptURLRequest(initial, withError: .requestAdaptationFailed(error))
                    return
                }
                didAdaptInitialRequest(initial, to: adapted)
                guard let head = RequestHead(adapted) else {
                    didFailToCreateURLRequest(with: Session.noURL)
                    return
                }
                guard let session = weakSession else {
                    finish(error: .sessionInvalidated(nil))
                    return
                }
                perform(head, isAdapted: true, session: session)
            }
        )
    }

    /// The first attempt counts the request in the retry budget and arms its deadline.
    private func didStartFirstAttempt(session: Session) {
        session.configuration.retryBudget?.recordRequest()
        if let deadline = session.configuration.requestDeadline {
            armDeadline(after: deadline, clock: session.clock)
        }
    }

    /// Runs one attempt of a custom request: the next delegate in place of the session's
    /// transport. Nothing goes on the wire, so nothing is adapted, and no cookie, redirect,
    /// challenge or cache applies; retriers, validators, monitors and the deadline do.
    private func prepareCustomAttempt(_ operation: CustomOperation, isFirst: Bool, session: Session) {
        var head = operation.head
        guard didCreateInitialRequest(head) else { return }
        if isFirst { didStartFirstAttempt(session: session) }
        guard didCreateRequest(&head, session: session, setsOwnCookie: true) != nil else { return }
        let transport = CustomOperationTransport(delegate: operation.nextDelegate(), url: head.url)
        let settings = RedirectSettings(
            handler: Redirector.doNotFollow,
            limit: 0,
            allowsInsecureRedirects: false,
            challengeResponder: nil,
            cookies: nil,
            setsOwnCookie: true
        )
        let attempt = Attempt(request: self, head: head, body: nil, transport: transport, redirects: settings)
        let task = transport.makeTask(for: head, body: nil, eventHandler: attempt)
        didCreateTask(task, for: head, attempt: attempt)
    }

    /// Sends one attempt with `head` over the session's transport, unless the request ended while
    /// it was being adapted. An adapted head is checked again (an adapter may have changed its URL
    /// or headers), and so is a download's (it may add `If-Range` with the server's own
    /// validator); any other was checked when it was built for this attempt.
    private func perform(_ head: RequestHead, isAdapted: Bool, session: Session) {
        guard !hasFinished else { return }
        var head = finalizing(head)
        if isAdapted || self is DownloadRequest {
            do {
                head = try head.movingUserInfoToAuthorization()
                try Session.validate(&head, allowsFileURL: session.configuration.allowsFileURLs)
                try session.checkBody(of: head)
            } catch {
                didFailToCreateURLRequest(with: error)
                return
            }
        }
        var body: RequestBody?
        if let upload = self as? UploadRequest {
            do {
                body = try upload.uploadableBody()
            } catch {
                // Reported to monitors as the uploadable's failure, once (as in Alamofire).
                finish(error: (error as? CourierError) ?? .createUploadableFailed(error))
                return
            }
        }
        // The session's cookies for this URL, unless the caller set `Cookie` itself (then theirs
        // goes, on every exchange of the attempt that stays on this origin).
        let cookies = session.configuration.cookieStorage
        let setsOwnCookie = head.headers.value(for: "Cookie") != nil
        if let cookies, !setsOwnCookie, let cookie = cookies.cookieHeader(for: head.url) {
            head.setHeader(cookie, for: "Cookie")
        }
        propagateContext(into: &head, because: .attempt)
        guard let redirects = didCreateRequest(&head, session: session, setsOwnCookie: setsOwnCookie) else { return }
        // A file the caller named is read the same way under every transport (see LocalFileTransport).
        // A URL that passed the network check is http or https: only another is looked at again.
        let transport =
            !head.isURLChecked && head.url.isFileURL ? LocalFileTransport() : session.exchangeTransport
        let attempt = Attempt(request: self, head: head, body: body, transport: transport, redirects: redirects)
        let task = transport.makeTask(for: head, body: body, eventHandler: attempt)
        didCreateTask(task, for: head, attempt: attempt)
    }
}
