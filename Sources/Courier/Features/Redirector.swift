import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ready-made ``RedirectHandler``s: follow every redirect (the default), follow none, or
/// change each next request with a closure, in the synchronous or completion-handler form.
///
/// ```swift
/// session.request(url).redirect(using: .doNotFollow)
/// session.request(url).redirect(using: .modify { _, next, _ in
///     var next = next
///     next.setValue("yes", forHTTPHeaderField: "X-Redirected")
///     return next
/// })
/// ```
public struct Redirector: RedirectHandler {
    /// What a ``Redirector`` does with each redirect.
    public enum Behavior: Sendable {
        /// Follow it, with the request Courier proposes.
        case follow
        /// Stop: the `3xx` is the response.
        case doNotFollow
        /// Return the request to send (changed or not), or `nil` to stop.
        case modify(@Sendable (Request, URLRequest, HTTPURLResponse) -> URLRequest?)
        /// Call the completion handler exactly once with the request to send, or `nil` to stop.
        /// A later call is ignored.
        case decide(@Sendable (Request, URLRequest, HTTPURLResponse, @escaping @Sendable (URLRequest?) -> Void) -> Void)
    }

    /// Follows every redirect: what a session does when given no handler.
    public static let follow = Redirector(behavior: .follow)

    /// Follows no redirect: every `3xx` is a response.
    public static let doNotFollow = Redirector(behavior: .doNotFollow)

    /// What this redirector does.
    public let behavior: Behavior

    /// A redirector that does `behavior`.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }

    /// A redirector that asks `closure` for each next request (`nil` stops).
    public static func modify(
        using closure: @escaping @Sendable (Request, URLRequest, HTTPURLResponse) -> URLRequest?
    ) -> Redirector {
        Redirector(behavior: .modify(closure))
    }

    /// A redirector that asks `closure` for each next request and waits for it to call its
    /// completion handler (`nil` stops).
    public static func decide(
        using closure:
            @escaping @Sendable (
                Request, URLRequest, HTTPURLResponse, @escaping @Sendable (URLRequest?) -> Void
            ) -> Void
    ) -> Redirector {
        Redirector(behavior: .decide(closure))
    }

    /// Follows, stops, or asks the closure, as ``behavior`` says.
    public func request(
        _ request: Request,
        willBeRedirectedTo redirectRequest: URLRequest,
        for response: HTTPURLResponse
    ) async -> URLRequest? {
        switch behavior {
        case .follow:
            return redirectRequest
        case .doNotFollow:
            return nil
        case .modify(let closure):
            return closure(request, redirectRequest, response)
        case .decide(let closure):
            // Resumed once: by the closure's first answer, or with `nil` when the request is
            // cancelled first (a closure that never answers would otherwise hold it for good).
            let waiter = Protected<(answered: Bool, continuation: CheckedContinuation<URLRequest?, Never>?)>(
                (false, nil)
            )
            let answer: @Sendable (URLRequest?) -> Void = { next in
                let continuation = waiter.withLock { state -> CheckedContinuation<URLRequest?, Never>? in
                    guard !state.answered else { return nil }
                    state.answered = true
                    defer { state.continuation = nil }
                    return state.continuation
                }
                continuation?.resume(returning: next)
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let isAnswered = waiter.withLock { state -> Bool in
                        if !state.answered { state.continuation = continuation }
                        return state.answered
                    }
                    if isAnswered {
                        continuation.resume(returning: nil)
                        return
                    }
                    if Task.isCancelled {
                        answer(nil)
                        return
                    }
                    closure(request, redirectRequest, response, answer)
                }
            } onCancel: {
                answer(nil)
            }
        }
    }

    /// What the request core can decide without calling anything: `true` to follow, `false` to
    /// stop, `nil` when a closure decides.
    var immediateDecision: Bool? {
        switch behavior {
        case .follow: return true
        case .doNotFollow: return false
        case .modify, .decide: return nil
        }
    }
}

extension RedirectHandler where Self == Redirector {
    /// Follows every redirect (see ``Redirector/follow``).
    public static var follow: Redirector { Redirector.follow }
    /// Follows no redirect (see ``Redirector/doNotFollow``).
    public static var doNotFollow: Redirector { Redirector.doNotFollow }
    /// Asks `closure` for each next request (see ``Redirector/modify(using:)``).
    public static func modify(
        using closure: @escaping @Sendable (Request, URLRequest, HTTPURLResponse) -> URLRequest?
    ) -> Redirector {
        Redirector.modify(using: closure)
    }
    /// Asks `closure` for each next request and waits for its completion handler (see
    /// ``Redirector/decide(using:)``).
    public static func decide(
        using closure:
            @escaping @Sendable (
                Request, URLRequest, HTTPURLResponse, @escaping @Sendable (URLRequest?) -> Void
            ) -> Void
    ) -> Redirector {
        Redirector.decide(using: closure)
    }
}
