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
    /// An attempt is one or more exchanges: Courier follows redirects here, the same way over
    /// every transport (which follow none themselves). A redirect's own exchange never reaches
    /// the request; its ``Hops`` decide what becomes of it, and the next exchange reports to this
    /// same attempt. The request sees one head, one body and one completion per attempt.
    ///
    /// The transport holds it, and through it the request, until the attempt completes: a
    /// request in flight stays alive even when nobody else holds it. The request is not a
    /// ``TransportEventHandler`` itself, so nothing outside Courier can feed it events.
    ///
    /// `@unchecked Sendable` for ``hops`` alone, which is written once: by this attempt's
    /// transport events, at the first redirect or `401`, before anything else reads it. Those events
    /// never overlap (the ``TransportEventHandler`` contract); an exchange's events begin only
    /// after the previous exchange's completion has made the next one under the request's lock;
    /// and the work that reads it on other threads (a handler's decision) starts after it is
    /// set. Everything else is a constant, and what the hops are is behind the request's lock.
    final class Attempt: TransportEventHandler, @unchecked Sendable {
        let request: Request
        private let transport: any Transport
        private let body: RequestBody?
        private let redirectHandler: (any RedirectHandler)?
        /// Answers a `401` with a credential, when the request or its session has any.
        private let challengeResponder: ChallengeResponder?
        /// The session's cookies: each exchange's `Set-Cookie` goes in, and each next exchange's
        /// `Cookie` comes out, unless the caller set `Cookie` on the request (``setsOwnCookie``).
        private let cookies: (any CookieStorage)?
        private let setsOwnCookie: Bool
        /// The attempt's first request, and its redirect rules: what ``hops`` starts from.
        private let head: RequestHead
        private let rules: Hops.Rules
        /// The attempt's redirects and answered challenges, made at the first redirect or `401`:
        /// from then on every event goes through them. Until then (for nearly every request)
        /// events go straight to the request, and an attempt makes nothing and takes no lock for
        /// redirects it does not meet.
        private var hops: Protected<Hops>?

        init(
            request: Request,
            head: RequestHead,
            body: RequestBody?,
            transport: any Transport,
            redirects: RedirectSettings
        ) {
            self.request = request
            self.transport = transport
            self.body = body
            challengeResponder = redirects.challengeResponder
            cookies = redirects.cookies
            setsOwnCookie = redirects.setsOwnCookie
            let handler = redirects.handler
            redirectHandler = handler
            let followsWithoutAsking: Bool? =
                if let handler { (handler as? Redirector)?.immediateDecision } else { true }
            self.head = head
            rules = Hops.Rules(
                limit: max(0, redirects.limit),
                allowsInsecureRedirects: redirects.allowsInsecureRedirects,
                followsWithoutAsking: followsWithoutAsking
            )
        }

        func transportTask(_ task: any TransportTask, didReceive response: HTTPURLResponse) {
            transportTask(task, didReceive: ResponseHead(response))
        }

        func transportTask(_ task: any TransportTask, didReceive head: ResponseHead) {
            if let cookies {
                let fields = head.setCookieFields
                // Stored for the URL that answered: each redirect's cookies by its own origin.
                if !fields.isEmpty { cookies.store(setCookieFields: fields, from: head.url ?? self.head.url) }
            }
            let hops: Protected<Hops>
            if let existing = self.hops {
                hops = existing
            } else {
                let isRedirect =
                    RedirectPolicy.isRedirect(status: head.statusCode) && rules.followsWithoutAsking != false
                let isChallenge = head.statusCode == 401 && challengeResponder != nil
                guard isRedirect || isChallenge else {
                    request.attempt(self, of: task, didReceive: head)
                    return
                }
                hops = Protected(Hops(head: self.head, rules: rules), sharingLockWith: request.mutableState)
                self.hops = hops
            }
            // What the cookie storage sends where a redirect leads, read outside the lock (it may
            // be the caller's) and after this response's cookies went in.
            var redirectCookie = Hops.RedirectCookie.unmanaged
            if let cookies, !setsOwnCookie, RedirectPolicy.isRedirect(status: head.statusCode) {
                let current = hops.withLock { $0.current }
                if case .follow(let hop) = RedirectPolicy.nextHop(
                    status: head.statusCode,
                    location: head.value(forHTTPHeaderField: "Location"),
                    method: current.method.rawValue,
                    from: current.url
                ) {
                    redirectCookie = .stored(cookies.cookieHeader(for: hop.url))
                }
            }
            // A body given as a URLRequest's stream is read once, like a one-shot RequestBody.
            let bodyIsReplayable = body?.isReplayable ?? (self.head.httpBodyStream == nil)
            // The answer is made before the machine decides, outside the lock: it reads the
            // credential storage. Only this thread moves the current request on.
            var answer: ChallengeResponder.Answer?
            var unanswerable: CourierError?
            if head.statusCode == 401, let challengeResponder {
                let (current, dropsBody) = hops.withLock { ($0.current, $0.dropsBody) }
                // Digest's auth-int hashes the body: an empty one or one in memory can be; a
                // file or a stream is not read twice for it.
                let sentBody: Data?
                if dropsBody {
                    sentBody = Data()
                } else if let body {
                    sentBody = body.data
                } else {
                    sentBody = current.httpBodyStream == nil ? current.httpBody ?? Data() : nil
                }
                do {
                    answer = try challengeResponder.answer(to: head, for: current, body: sentBody)
                } catch {
                    unanswerable = error
                }
            }
            let (action, accepted) = hops.withLock { hops in
                let action = hops.receive(
                    head,
                    bodyIsReplayable: bodyIsReplayable,
                    answer: answer,
                    unanswerable: unanswerable,
                    redirectCookie: redirectCookie
                )
                return (action, hops.takeAccepted())
            }
            if let accepted, let storage = challengeResponder?.storage {
                ChallengeResponder.remember(accepted.credential, for: accepted.space, in: storage)
            }
            switch action {
            case .forward: request.attempt(self, of: task, didReceive: head)
            case .none: break
            case .cancelTask: task.cancel()
            case .ask(let proposed): ask(about: head, proposing: proposed, task: task, hops: hops)
            }
        }

        func transportTask(_ task: any TransportTask, didReceive data: Data) {
            guard let hops else {
                request.attempt(self, of: task, didReceive: data)
                return
            }
            switch hops.withLock({ $0.receive(data) }) {
            case .forward: request.attempt(self, of: task, didReceive: data)
            case .drop: break
            case .cancelTask: task.cancel()
            case .holdBack: request.holdTransferBack(true, for: .redirectReplay, by: self)
            }
        }

        func transportTask(
            _ task: any TransportTask,
            didSendBodyBytes totalBytesSent: Int64,
            of totalBytesExpected: Int64?
        ) {
            request.recordBodyBytesSent(by: self, totalBytesSent: totalBytesSent, of: totalBytesExpected)
        }

        func transportTask(_ task: any TransportTask, didCompleteWith error: URLError?, metrics: RequestMetrics) {
            guard let hops else {
                request.attempt(self, of: task, didCompleteWith: error, metrics: metrics)
                return
            }
            let action = hops.withLock { $0.complete(Hops.Completion(error: error, metrics: metrics)) }
            if case .forward = action {
                request.attempt(self, of: task, didCompleteWith: error, metrics: metrics)
                return
            }
            perform(action, task: task, hops: hops)
        }

        // MARK: - Redirects

        /// Asks the handler, off the transport's thread, whether to follow `response` with
        /// `proposed`; the exchange goes on meanwhile, and what it reports is kept.
        private func ask(
            about response: ResponseHead,
            proposing proposed: RequestHead,
            task: any TransportTask,
            hops: Protected<Hops>
        ) {
            guard let handler = redirectHandler else {
                perform(hops.withLock { $0.decided(.success(proposed)) }, task: task, hops: hops)
                return
            }
            // Held by the request, so that cancelling it cancels the handler's wait too (a
            // `Redirector.decide` closure that never answers then lets go).
            let work = Task { [self] in
                let decision: Result<RequestHead?, CourierError>
                if let httpResponse = response.httpURLResponse {
                    let answer = await handler.request(
                        request,
                        willBeRedirectedTo: proposed.urlRequest,
                        for: httpResponse
                    )
                    // The request's cache mode goes on with whatever request the handler returns.
                    decision = Self.checked(answer).map { head in
                        head.map { head in
                            var head = head
                            head.cacheMode = proposed.cacheMode
                            return head
                        }
                    }
                } else {
                    // No HTTPURLResponse can be made for this URL: nothing to ask with, so the
                    // rules alone decide.
                    decision = .success(proposed)
                }
                // The handler may have sent it elsewhere, and the storage may have changed while
                // it decided: the loop check reads what will be sent.
                var redirectCookie = Hops.RedirectCookie.unmanaged
                if let cookies, !setsOwnCookie, case .success(let next?) = decision {
                    redirectCookie = .stored(cookies.cookieHeader(for: next.url))
                }
                perform(
                    hops.withLock { $0.decided(decision, redirectCookie: redirectCookie) },
                    task: task,
                    hops: hops
                )
            }
            request.setPendingWork(work)
        }

        /// The handler's answer as the next head, checked as any request's is.
        private static func checked(_ answer: URLRequest?) -> Result<RequestHead?, CourierError> {
            guard let answer else { return .success(nil) }
            guard var head = RequestHead(answer) else { return .failure(Session.noURL) }
            do {
                try Session.validate(&head)
            } catch {
                return .failure(error)
            }
            return .success(head)
        }

        private func perform(_ action: Hops.NextAction, task: any TransportTask, hops: Protected<Hops>) {
            switch action {
            case .none:
                break
            case .forward:
                // Only a completion is forwarded this way, and it was handed over by the caller.
                break
            case .cancelTask:
                task.cancel()
            case .fail(let error, let metrics):
                // The request reads a CourierError carried under NSUnderlyingErrorKey as itself.
                let carrier = URLError(.badServerResponse, userInfo: [NSUnderlyingErrorKey: error])
                request.attempt(self, of: task, didCompleteWith: carrier, metrics: metrics)
            case .startNextExchange(let next, let redirect, let challenge):
                startExchange(next, after: redirect, answering: challenge, hops: hops)
            case .replay(let response, let kept):
                replay(response, kept, task: task, hops: hops)
            }
        }

        /// Hands the request a redirect its handler declined, with what its exchange reported
        /// meanwhile, and then whatever came during the handing over, until nothing is left.
        private func replay(
            _ response: ResponseHead,
            _ kept: Hops.Kept,
            task: any TransportTask,
            hops: Protected<Hops>
        ) {
            request.attempt(self, of: task, didReceive: response)
            var round = kept
            while true {
                for piece in round.pieces { request.attempt(self, of: task, didReceive: piece) }
                if let completion = round.completion {
                    request.attempt(self, of: task, didCompleteWith: completion.error, metrics: completion.metrics)
                }
                switch hops.withLock({ $0.replayed() }) {
                case .replay(let next):
                    round = next
                case .done(let releasesHold):
                    if releasesHold { request.holdTransferBack(false, for: .redirectReplay, by: self) }
                    return
                }
            }
        }

        /// Sends `next` (the request `redirect` leads to, or a challenge's answer), unless the
        /// request has ended meanwhile.
        private func startExchange(
            _ next: RequestHead,
            after redirect: Redirect?,
            answering challenge: ResponseHead?,
            hops: Protected<Hops>
        ) {
            var next = next
            if let cookies, !setsOwnCookie {
                // The cookies for where it goes, with any the last response set.
                next.setHeader(cookies.cookieHeader(for: next.url), for: "Cookie")
            }
            if let response = redirect?.response {
                request.propagateContext(into: &next, because: .redirect(response))
            } else if let challenge {
                request.propagateContext(into: &next, because: .challengeAnswer(challenge))
            }
            if let redirect {
                let sent = Redirect(
                    request: redirect.request,
                    response: redirect.response,
                    metrics: redirect.metrics,
                    nextRequest: next
                )
                guard request.willFollow(sent, in: self) else { return }
            } else {
                guard !request.hasFinished else { return }
            }
            let sendsBody = !hops.withLock { $0.dropsBody }
            let task = transport.makeTask(
                for: next,
                body: sendsBody ? body : nil,
                eventHandler: self
            )
            request.didCreateTask(task, forNextExchangeIn: self)
        }
    }

    /// The redirect handler, limit and downgrade rule an attempt follows, and the credentials it
    /// may answer a challenge with: the request's own, else the session's.
    struct RedirectSettings {
        var handler: (any RedirectHandler)?
        var limit: Int
        var allowsInsecureRedirects: Bool
        var challengeResponder: ChallengeResponder?
        var cookies: (any CookieStorage)?
        /// Whether the caller set `Cookie` on the request, which the cookie storage then leaves be.
        var setsOwnCookie: Bool
    }
}
