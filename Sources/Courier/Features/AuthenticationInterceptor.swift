import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// @unchecked Sendable: the credential, the refresh under way and the refresh times sit in
// `state`, behind one lock.
/// Adds a credential to every request and renews it when it expires or a server refuses it,
/// with one refresh however many requests need it.
///
/// ```swift
/// let interceptor = AuthenticationInterceptor(authenticator: OAuthAuthenticator(), credential: token)
/// let session = Session(interceptor: interceptor)
/// ```
///
/// Before each attempt, a credential that ``AuthenticationCredential/requiresRefresh`` is
/// refreshed first. After a failure the ``Authenticator`` attributes to the credential (a `401` by
/// default), the request is retried: at once if the credential was renewed since it was sent,
/// otherwise after a refresh. Requests that need a refresh while one is under way wait for it, so
/// fifty requests refused together cause one refresh; if it fails, all fifty fail with its error
/// (``CourierError/Kind/requestRetryFailed``). More than ``RefreshWindow/maximumAttempts``
/// refreshes within ``RefreshWindow/interval`` fail with ``AuthenticationError/excessiveRefresh``.
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestInterceptor, @unchecked Sendable
{
    /// The credential type of the authenticator.
    public typealias Credential = AuthenticatorType.Credential

    /// How many refreshes may happen within how long before refreshing is taken to be looping.
    public struct RefreshWindow: Sendable {
        /// The span, in seconds, in which refreshes are counted. NaN and negatives count as 0 (no
        /// refresh is ever too soon), anything beyond a billion seconds (infinity included) as that.
        public var interval: TimeInterval
        /// The most refreshes allowed within ``interval``.
        public var maximumAttempts: Int

        /// A window of `maximumAttempts` refreshes per `interval` seconds (by default 5 per 30 s).
        public init(interval: TimeInterval = 30, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    private struct State {
        var credential: Credential?
        /// Counts credential changes, so a request can tell whether its credential is still current.
        var generation = 0
        var refresh: Task<Credential, any Error>?
        var refreshTimes: [ContinuousClock.Instant] = []
        /// Why the last refresh of the current credential failed: a `401` for that credential
        /// then fails with it, as in Alamofire, rather than refreshing again at once.
        var failedRefresh: (generation: Int, error: any Error)?
    }

    /// The authenticator that applies and refreshes credentials.
    public let authenticator: AuthenticatorType
    /// The refresh limit; `nil` when any number of refreshes is allowed (as in Alamofire, no
    /// loop is then detected across requests, though one request's adaptation still gives up after
    /// 10 refreshed credentials that all need refreshing again).
    public let refreshWindow: RefreshWindow?
    private let state: Protected<State>

    /// An interceptor adding `credential` (set it later with ``credential`` if you have none yet).
    public init(
        authenticator: AuthenticatorType,
        credential: Credential? = nil,
        refreshWindow: RefreshWindow? = .init()
    ) {
        self.authenticator = authenticator
        self.refreshWindow = refreshWindow
        self.state = Protected(State(credential: credential))
    }

    /// The credential added to requests; setting it (after a login, say) takes effect from the next attempt.
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set {
            state.withLock { state in
                state.credential = newValue
                state.generation += 1
                // A refresh under way renews what this replaces: its result must not overwrite it.
                state.refresh = nil
                state.failedRefresh = nil
            }
        }
    }

    /// Adds the credential, refreshing it first when it requires that. A refreshed credential
    /// that still requires refreshing is not applied: it is refreshed again, as in Alamofire,
    /// until the refresh window calls it a loop (``AuthenticationError/excessiveRefresh``).
    public func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
        var (current, generation) = state.withLock { ($0.credential, $0.generation) }
        // Bounded even when the window allows any number of refreshes (an interval of 0): an
        // authenticator whose fresh credentials are always expired is looping, whatever the window.
        for _ in 0...min(max(1, refreshWindow?.maximumAttempts ?? 10), 10) {
            guard let credential = current else { throw AuthenticationError.missingCredential }
            guard credential.requiresRefresh else {
                var urlRequest = urlRequest
                authenticator.apply(credential, to: &urlRequest)
                return urlRequest
            }
            _ = try await refreshed(from: generation, for: session)
            (current, generation) = state.withLock { ($0.credential, $0.generation) }
        }
        throw AuthenticationError.excessiveRefresh
    }

    /// Retries a request the authenticator says its credential failed, refreshing the credential
    /// unless that has happened since the request was sent. If refreshing this very credential
    /// failed already, the request fails with that refresh's error instead of starting another.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        guard let urlRequest = request.request, let response = request.response,
            authenticator.didRequest(urlRequest, with: response, failDueToAuthenticationError: error)
        else { return .doNotRetry }
        let (current, generation) = state.withLock { ($0.credential, $0.generation) }
        guard let credential = current else { return .doNotRetryWithError(AuthenticationError.missingCredential) }
        guard authenticator.isRequest(urlRequest, authenticatedWith: credential) else { return .retry }
        do {
            _ = try await refreshed(from: generation, for: session, unlessItFailed: true)
            return .retry
        } catch {
            return .doNotRetryWithError(error)
        }
    }

    /// A credential newer than `generation`: the current one if it has changed since, else the
    /// result of the refresh under way, or of a new one (within the window). Decided under the
    /// lock, so a request that saw an old credential never refreshes a new one again. With
    /// `unlessItFailed` (a `401`), a credential whose last refresh failed is not refreshed again:
    /// that failure is thrown, as in Alamofire.
    private func refreshed(
        from generation: Int,
        for session: Session,
        unlessItFailed: Bool = false
    ) async throws -> Credential {
        let authenticator = self.authenticator
        let window = refreshWindow
        let now = ContinuousClock.now
        let protectedState = self.state
        let refresh = protectedState.withLock { state -> Task<Credential, any Error> in
            if state.generation != generation, let current = state.credential { return Task { current } }
            if let refresh = state.refresh { return refresh }
            guard let credential = state.credential else {
                return Task { throw AuthenticationError.missingCredential }
            }
            if unlessItFailed, let failed = state.failedRefresh, failed.generation == state.generation {
                let error = failed.error
                return Task { throw error }
            }
            if let window {
                let span = window.interval.isNaN ? 0 : min(max(window.interval, 0), 1e9)
                state.refreshTimes.removeAll { now - $0 > .nanoseconds(Int64(span * 1e9)) }
                guard state.refreshTimes.count < window.maximumAttempts else {
                    // Recorded as a failed refresh, as in Alamofire: a later 401 fails with it too.
                    state.failedRefresh = (state.generation, AuthenticationError.excessiveRefresh)
                    return Task { throw AuthenticationError.excessiveRefresh }
                }
                state.refreshTimes.append(now)
            }
            let refreshGeneration = state.generation
            // The refresh records its own outcome, so it counts even if every waiter gave up.
            let refresh = Task {
                do {
                    let fresh = try await authenticator.refresh(credential, for: session)
                    protectedState.withLock { state in
                        // A credential set meanwhile (a login) wins over this refresh.
                        guard state.generation == refreshGeneration else { return }
                        state.credential = fresh
                        state.generation += 1
                        state.refresh = nil
                        state.failedRefresh = nil
                    }
                    return fresh
                } catch {
                    protectedState.withLock { state in
                        guard state.generation == refreshGeneration else { return }
                        state.refresh = nil
                        state.failedRefresh = (refreshGeneration, error)
                    }
                    throw error
                }
            }
            state.refresh = refresh
            return refresh
        }
        // A cancelled request stops waiting at once; the refresh goes on for the others.
        return try await refresh.valueUnlessWaiterCancelled()
    }
}
