import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// The redirects of one attempt as a value: which response is a redirect to follow, what the
    /// next request is, and what happens to the events of a redirect's own exchange. Like
    /// ``StateMachine``, it does no I/O, takes no lock and calls nothing; its ``Attempt`` holds it
    /// behind the request's lock and performs the actions after releasing it.
    ///
    /// | phase      | event                               | → phase    | action                                   |
    /// |------------|-------------------------------------|------------|------------------------------------------|
    /// | forwarding | a head that is not a redirect to follow | forwarding | hand it to the request               |
    /// | forwarding | a redirect, followed without asking | following  | none: its body is dropped                |
    /// | forwarding | a redirect, the handler asked       | deciding   | ask the ``RedirectHandler``              |
    /// | forwarding | a redirect refused (limit, loop, downgrade, bad `Location`) | failing | cancel the exchange |
    /// | deciding   | body, completion                    | deciding   | keep them (body up to a limit, then stop the exchange) |
    /// | deciding   | follow                              | following  | start the next hop if the exchange is over |
    /// | deciding   | stop                                | replaying  | hand the redirect and what was kept to the request |
    /// | replaying  | body, completion                    | replaying  | keep them for the replay                 |
    /// | replaying  | replay done                         | forwarding | (or replay what came meanwhile)          |
    /// | following  | body                                | following  | drop it (past a limit, stop the exchange) |
    /// | following  | completion (any outcome)            | forwarding | record the redirect, start the next hop  |
    /// | forwarding | a `401` the request has a credential for | following | none: the answer is sent at its end |
    /// | forwarding | a `401` again after an answer        | failing    | cancel the exchange (authentication failed) |
    /// | forwarding | a `401` again, its Digest nonce stale (once) | following | none: answered again with the new nonce |
    /// | forwarding | a `401` whose credential cannot be written (a Basic user name with `:`) | failing | cancel the exchange |
    /// | failing    | completion                          | failing    | the attempt fails with the refusal       |
    /// | forwarding | body, completion                    | forwarding | hand them to the request                 |
    struct Hops {
        /// How the request treats redirects, taken when the attempt starts.
        struct Rules {
            /// Redirects one attempt follows; one more fails it.
            var limit: Int
            /// Whether a redirect from `https` to `http` is followed.
            var allowsInsecureRedirects: Bool
            /// `true`: follow without asking; `false`: every redirect is the response; `nil`:
            /// ask the handler.
            var followsWithoutAsking: Bool?
        }

        /// What the `Cookie` field of a redirect's next request will be, as far as the cookie
        /// storage decides it: part of what makes it the same request as one sent before.
        enum RedirectCookie: Equatable {
            /// The storage does not set it (there is none, or the caller set `Cookie` itself):
            /// the field goes on as the last request had it, or is dropped leaving the origin.
            case unmanaged
            /// The storage sends this for the target (`nil`: nothing).
            case stored(String?)
        }

        /// A redirect exchange's completion.
        struct Completion {
            let error: URLError?
            let metrics: RequestMetrics
        }

        /// What a redirect's exchange reported while its handler decided, or while the request
        /// was being handed what came before.
        struct Kept {
            var pieces: [Data] = []
            var bytes = 0
            var completion: Completion?
            /// The body passed ``Hops/maximumKeptBytes``: it was dropped and the exchange stopped.
            var overflowed = false
        }

        enum Phase {
            /// Events go to the request.
            case forwarding
            /// The handler decides about `response`; Courier proposed `proposed`.
            case deciding(response: ResponseHead, proposed: RequestHead, kept: Kept)
            /// The handler declined: what was kept is being handed to the request.
            case replaying(Kept)
            /// `response` is answered with `next` once its exchange is over: a redirect followed
            /// (`isRedirect`), or a challenge answered with a credential; `dropped` body bytes so
            /// far; `isStopped` once the exchange was cancelled for dropping too many.
            case following(response: ResponseHead, next: RequestHead, isRedirect: Bool, dropped: Int, isStopped: Bool)
            /// The redirect was refused: the attempt fails with this when the exchange ends.
            case failing(CourierError)
        }

        /// The most body bytes of a followed redirect read and dropped so that its connection can
        /// be used again; a longer body is cut off by stopping the exchange.
        static let maximumDroppedBytes = 64 * 1024
        /// The most body bytes of a redirect kept while its handler decides.
        static let maximumKeptBytes = Redirect.maximumHeldBodyBytes

        let rules: Rules
        private(set) var phase = Phase.forwarding
        /// What the current hop sent.
        private(set) var current: RequestHead
        /// Redirects followed so far in this attempt.
        private(set) var count = 0
        /// Whether a redirect turned the request into one without a body (a GET).
        private(set) var dropsBody = false
        /// The requests this attempt made, as ``RedirectPolicy/loopKey(of:)`` reads them.
        private var visited: Set<String> = []
        /// The scheme the current exchange's credential answered, while its verdict is awaited.
        private var answeredScheme: String?
        /// Whether a stale nonce was answered again in this attempt (once is enough).
        private var hasAnsweredStale = false
        /// The answered credential to keep, once the server accepts it.
        private var unconfirmed: (credential: URLCredential, space: URLProtectionSpace)?
        /// Whether the replay held the transfer back, to be let go when it is done.
        private var holdsTransferBack = false
        /// A credential the server has just accepted, for the attempt to keep in the storage.
        private(set) var accepted: (credential: URLCredential, space: URLProtectionSpace)?

        init(head: RequestHead, rules: Rules) {
            current = head
            self.rules = rules
            visited = [RedirectPolicy.loopKey(of: head)]
        }

        /// What to do with a response head.
        enum HeadAction {
            /// Hand it to the request: it is the response.
            case forward
            /// Nothing now: a followed redirect's exchange runs to its end, or the head is not
            /// the current exchange's first.
            case none
            /// Ask the handler whether to send `proposed` next.
            case ask(proposed: RequestHead)
            /// The redirect is refused: stop its exchange (the completion fails the attempt).
            case cancelTask
        }

        /// A response head arrived. `bodyIsReplayable` says whether the body could be sent
        /// again (a body read once cannot: its `307` or `308` is the response, its `401` too).
        /// `answer` is the request that answers it with a credential, if it is a challenge the
        /// request has one for; `unanswerable` is why the challenge has a credential that cannot be
        /// sent (it fails the request, rather than hand back a `401` that hides why).
        /// `redirectCookie` is what the cookie storage, with this response's cookies stored, sends
        /// where the redirect leads: a request back to an earlier URL with other cookies is no
        /// loop (a login's round trip), one with the same is.
        mutating func receive(
            _ response: ResponseHead,
            bodyIsReplayable: Bool,
            answer: ChallengeResponder.Answer? = nil,
            unanswerable: CourierError? = nil,
            redirectCookie: RedirectCookie = .unmanaged
        ) -> HeadAction {
            guard case .forwarding = phase else { return .none }
            if let scheme = answeredScheme {
                answeredScheme = nil
                // A Digest nonce gone stale is answered once more, with the new one.
                if response.statusCode == 401, let answer, answer.isStale, !hasAnsweredStale {
                    hasAnsweredStale = true
                    return send(answer, to: response)
                }
                if response.statusCode == 401 {
                    unconfirmed = nil
                    phase = .failing(.authenticationFailed(scheme: scheme))
                    return .cancelTask
                }
                // Kept only once the server has answered the credentialed request with success
                // (or a redirect): a 500 says nothing of the credential.
                if response.statusCode < 400 { accepted = unconfirmed }
                unconfirmed = nil
            }
            if let unanswerable, response.statusCode == 401 {
                phase = .failing(unanswerable)
                return .cancelTask
            }
            if let answer, response.statusCode == 401, bodyIsReplayable || dropsBody {
                return send(answer, to: response)
            }
            guard RedirectPolicy.isRedirect(status: response.statusCode), rules.followsWithoutAsking != false else {
                return .forward
            }
            let decision = RedirectPolicy.nextHop(
                status: response.statusCode,
                location: response.value(forHTTPHeaderField: "Location"),
                method: current.method.rawValue,
                from: current.url
            )
            switch decision {
            case .deliver:
                return .forward
            case .fail(let error):
                phase = .failing(error)
                return .cancelTask
            case .follow(let hop):
                if !hop.dropsBody, !dropsBody, !bodyIsReplayable { return .forward }
                var next = current.redirected(by: hop)
                if case .stored(let cookie) = redirectCookie { next.setHeader(cookie, for: "Cookie") }
                if let refusal = refusal(of: next) {
                    phase = .failing(refusal)
                    return .cancelTask
                }
                if hop.dropsBody { dropsBody = true }
                if rules.followsWithoutAsking == true {
                    phase = .following(response: response, next: next, isRedirect: true, dropped: 0, isStopped: false)
                    return .none
                }
                phase = .deciding(response: response, proposed: next, kept: Kept())
                return .ask(proposed: next)
            }
        }

        /// Answers the challenge `response` with `answer` once its exchange is over.
        private mutating func send(_ answer: ChallengeResponder.Answer, to response: ResponseHead) -> HeadAction {
            answeredScheme = answer.scheme
            unconfirmed = answer.remember
            phase = .following(response: response, next: answer.next, isRedirect: false, dropped: 0, isStopped: false)
            return .none
        }

        /// What to do with a piece of body.
        enum DataAction {
            case forward
            case drop
            /// Stop the exchange: a redirect's body is longer than is worth reading.
            case cancelTask
            /// Keep it, and hold the transfer back until the replay has caught up.
            case holdBack
        }

        mutating func receive(_ piece: Data) -> DataAction {
            switch phase {
            case .forwarding:
                return .forward
            case .failing:
                return .drop
            case .deciding(let response, let proposed, var kept):
                guard !kept.overflowed else { return .drop }
                if kept.bytes + piece.count > Self.maximumKeptBytes {
                    kept.overflowed = true
                    kept.pieces = []
                    phase = .deciding(response: response, proposed: proposed, kept: kept)
                    return .cancelTask
                }
                kept.pieces.append(piece)
                kept.bytes += piece.count
                phase = .deciding(response: response, proposed: proposed, kept: kept)
                return .drop
            case .replaying(var kept):
                kept.pieces.append(piece)
                kept.bytes += piece.count
                phase = .replaying(kept)
                // The request takes pieces slower than they come (a download writing to disk):
                // the transfer waits for the replay to catch up.
                guard kept.bytes > Self.maximumKeptBytes else { return .drop }
                holdsTransferBack = true
                return .holdBack
            case .following(let response, let next, let isRedirect, let dropped, let isStopped):
                guard !isStopped else { return .drop }
                let total = dropped + piece.count
                let stops = total > Self.maximumDroppedBytes
                phase = .following(
                    response: response,
                    next: next,
                    isRedirect: isRedirect,
                    dropped: total,
                    isStopped: stops
                )
                return stops ? .cancelTask : .drop
            }
        }

        /// What to do when an exchange completes, or a handler has decided.
        enum NextAction {
            case none
            /// Hand the completion to the request.
            case forward
            /// The attempt fails with this (after `metrics`, those of the exchange that ended).
            case fail(CourierError, metrics: RequestMetrics)
            /// Stop the exchange (the refusal is reported with its completion).
            case cancelTask
            /// Send `next`: the request a redirect leads to (`redirect` records it) or a
            /// challenge's answer.
            /// Send the next exchange: after `redirect` followed, or answering `challenge`.
            case startNextExchange(RequestHead, redirect: Redirect?, challenge: ResponseHead?)
            /// The handler declined: hand the redirect's head and what was kept to the request,
            /// then call ``replayed()`` until it says the replay is done.
            case replay(ResponseHead, Kept)
        }

        mutating func complete(_ completion: Completion) -> NextAction {
            switch phase {
            case .forwarding:
                return .forward
            case .failing(let error):
                return .fail(error, metrics: completion.metrics)
            case .deciding(let response, let proposed, var kept):
                kept.completion = completion
                phase = .deciding(response: response, proposed: proposed, kept: kept)
                return .none
            case .replaying(var kept):
                kept.completion = completion
                phase = .replaying(kept)
                return .none
            case .following(let response, let next, true, _, _):
                return advance(from: response, to: next, metrics: completion.metrics)
            case .following(let response, let next, false, _, _):
                // `current` stays the request without the answer's `Authorization`: a redirect
                // from here starts from it, and the next challenge is answered for its own URL
                // and method (a Digest answer names both); nor is the credential recorded.
                phase = .forwarding
                return .startNextExchange(next, redirect: nil, challenge: response)
            }
        }

        /// The handler decided: follow with `next` (`.success(head)`), stop (`.success(nil)`), or
        /// the request it returned cannot be sent (`.failure`). `redirectCookie` is what the
        /// cookie storage sends where `next` goes.
        mutating func decided(
            _ decision: Result<RequestHead?, CourierError>,
            redirectCookie: RedirectCookie = .unmanaged
        ) -> NextAction {
            guard case .deciding(let response, let proposed, let kept) = phase else { return .none }
            var refusal: CourierError?
            var decision = decision
            // A handler that sends the request to another origin than the one proposed sends
            // it without the credential headers, as a redirect there would.
            if case .success(var next?) = decision, !RedirectPolicy.isSameOrigin(proposed.url, next.url) {
                for name in RedirectPolicy.credentialHeaders where next.headers.value(for: name) != nil {
                    next.setHeader(nil, for: name)
                }
                decision = .success(next)
            }
            if case .success(var next?) = decision, case .stored(let cookie) = redirectCookie {
                next.setHeader(cookie, for: "Cookie")
                decision = .success(next)
            }
            switch decision {
            case .failure(let error):
                refusal = error
            case .success(nil):
                if kept.overflowed {
                    refusal = .bufferLimitExceeded(limit: Self.maximumKeptBytes)
                } else {
                    phase = .replaying(Kept())
                    return .replay(response, kept)
                }
            case .success(let next?):
                refusal = self.refusal(of: next)
                if refusal == nil {
                    if let completion = kept.completion {
                        return advance(from: response, to: next, metrics: completion.metrics)
                    }
                    phase = .following(
                        response: response,
                        next: next,
                        isRedirect: true,
                        dropped: kept.bytes,
                        isStopped: kept.overflowed
                    )
                    return .none
                }
            }
            let error = refusal ?? .bufferLimitExceeded(limit: Self.maximumKeptBytes)
            phase = .failing(error)
            if let completion = kept.completion { return .fail(error, metrics: completion.metrics) }
            return kept.overflowed ? .none : .cancelTask
        }

        /// What the replay hands over next.
        enum ReplayAction {
            /// What came during the last round.
            case replay(Kept)
            /// Nothing: events go straight to the request from now on; `releasesHold` when the
            /// replay had held the transfer back.
            case done(releasesHold: Bool)
        }

        /// The replayer handed over its last round.
        mutating func replayed() -> ReplayAction {
            guard case .replaying(let kept) = phase else { return .done(releasesHold: false) }
            guard !kept.pieces.isEmpty || kept.completion != nil else {
                phase = .forwarding
                defer { holdsTransferBack = false }
                return .done(releasesHold: holdsTransferBack)
            }
            phase = .replaying(Kept())
            return .replay(kept)
        }

        /// The credential the server has just accepted, once: the attempt keeps it in the storage.
        mutating func takeAccepted() -> (credential: URLCredential, space: URLProtectionSpace)? {
            defer { accepted = nil }
            return accepted
        }

        /// Why `next` must not be sent, if it must not: past the limit, a downgrade to `http`, or
        /// a request this attempt has made already.
        private mutating func refusal(of next: RequestHead) -> CourierError? {
            if count >= rules.limit { return .redirectFailed(.tooManyRedirects(limit: rules.limit)) }
            if !rules.allowsInsecureRedirects, RedirectPolicy.isDowngrade(from: current.url, to: next.url) {
                return .redirectFailed(.insecureRedirect(url: next.url.absoluteString))
            }
            if visited.contains(RedirectPolicy.loopKey(of: next)) {
                return .redirectFailed(.loop(url: next.url.absoluteString))
            }
            return nil
        }

        private mutating func advance(
            from response: ResponseHead,
            to next: RequestHead,
            metrics: RequestMetrics
        )
            -> NextAction
        {
            let redirect = Redirect(request: current, response: response, metrics: metrics, nextRequest: next)
            visited.insert(RedirectPolicy.loopKey(of: next))
            count += 1
            current = next
            phase = .forwarding
            return .startNextExchange(next, redirect: redirect, challenge: nil)
        }
    }
}
