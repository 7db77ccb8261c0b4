import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How an ``AuthenticationInterceptor`` uses and renews one kind of credential: the part of
/// token handling that differs between APIs.
public protocol Authenticator: Sendable {
    /// The credential this authenticator handles.
    associatedtype Credential: AuthenticationCredential

    /// Adds `credential` to `urlRequest`, usually as an `Authorization` header.
    func apply(_ credential: Credential, to urlRequest: inout URLRequest)

    /// Returns a fresh credential in place of `credential`, for example by calling the API's token
    /// endpoint. Throwing fails every request waiting for it. Call the endpoint with a session (or
    /// a request) this interceptor does not serve: a token request that needed a refresh itself
    /// would wait for its own result.
    func refresh(_ credential: Credential, for session: Session) async throws -> Credential

    /// The same in Alamofire's completion form: call `completion` exactly once with the fresh
    /// credential or the error. Implement whichever form suits you; each one's default calls the
    /// other, so an authenticator written for Alamofire works unchanged. (One that implements
    /// neither fails its refresh with ``AuthenticationError/refreshNotImplemented``.)
    func refresh(
        _ credential: Credential,
        for session: Session,
        completion: @escaping @Sendable (Result<Credential, any Error>) -> Void
    )

    /// Whether `urlRequest` failed because its credential was refused, so a refresh may help.
    /// By default, a `401` response.
    func didRequest(
        _ urlRequest: URLRequest,
        with response: HTTPURLResponse,
        failDueToAuthenticationError error: CourierError
    ) -> Bool

    /// Whether `urlRequest` was sent with `credential`: if not, the credential was renewed since,
    /// and the request is retried with the new one without another refresh.
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// Awaits the completion form, ``refresh(_:for:completion:)``.
    public func refresh(_ credential: Credential, for session: Session) async throws -> Credential {
        try await RefreshBridge.$bridgedType.withValue(ObjectIdentifier(Self.self)) {
            try await withCheckedThrowingContinuation { continuation in
                // At most once: a second call of an Alamofire-style completion is ignored rather
                // than resuming the continuation twice.
                let once = Protected(Optional(continuation))
                refresh(credential, for: session) { result in
                    once.withLock { pending in
                        defer { pending = nil }
                        return pending
                    }?.resume(with: result)
                }
            }
        }
    }

    /// Runs the async form, ``refresh(_:for:)``, in a task and calls `completion` with its outcome.
    public func refresh(
        _ credential: Credential,
        for session: Session,
        completion: @escaping @Sendable (Result<Credential, any Error>) -> Void
    ) {
        // Reached from this type's async default: neither form was implemented, and calling
        // back would recurse for ever. (The type is compared, not a flag, so that one
        // authenticator refreshing through another is not mistaken for this.)
        guard RefreshBridge.bridgedType != ObjectIdentifier(Self.self) else {
            completion(.failure(AuthenticationError.refreshNotImplemented))
            return
        }
        Task {
            do {
                completion(.success(try await refresh(credential, for: session)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// A `401` response.
    public func didRequest(
        _ urlRequest: URLRequest,
        with response: HTTPURLResponse,
        failDueToAuthenticationError error: CourierError
    ) -> Bool {
        response.statusCode == 401
    }
}

/// The authenticator type whose async default of ``Authenticator/refresh(_:for:)`` forwarded to
/// its completion form, so that the completion form's default can tell it would loop.
enum RefreshBridge {
    @TaskLocal static var bridgedType: ObjectIdentifier?
}
