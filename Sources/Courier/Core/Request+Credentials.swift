import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A request's own credential: what it answers a `401` with, on the origin it is sent to.
extension Request {
    /// The credential this request answers a server's `401` with, if one was set with
    /// ``authenticate(username:password:persistence:)`` or ``authenticate(with:)``.
    public var credential: URLCredential? { mutableState.withLock { $0.credential } }

    /// Answers the server's `401` with `username` and `password`, by the strongest scheme it
    /// offers that Courier supports, once per attempt; a second `401` fails the request with
    /// ``CourierError/Kind/authenticationFailed``. The credential goes only to the origin the
    /// request is sent to, after its adapters, or to the same host upgraded from `http` to
    /// `https` on the default ports (never after a redirect elsewhere). Once accepted, it is kept in the
    /// session's ``Session/Configuration/credentialStorage`` as `persistence` says. When Basic
    /// is the scheme to answer with (the only one offered, or the only one Courier can use) and
    /// the user name holds a `:` (or either a control character), the request fails with
    /// ``CourierError/Kind/credentialEncodingFailed`` rather than send a credential the server
    /// would read as another; so does one found in the credential storage. The `401` is then not
    /// the response: the error says what to fix.
    @discardableResult
    public func authenticate(
        username: String,
        password: String,
        persistence: URLCredential.Persistence = .forSession
    ) -> Self {
        authenticate(with: URLCredential(user: username, password: password, persistence: persistence))
    }

    /// Answers the server's `401` with `credential` (see ``authenticate(username:password:persistence:)``).
    @discardableResult
    public func authenticate(with credential: URLCredential) -> Self {
        mutableState.withLock { $0.credential = credential }
        return self
    }
}
