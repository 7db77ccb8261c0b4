import Foundation

/// What a ``RequestAdapter`` knows about the attempt it adapts.
public struct RequestAdapterState: Sendable {
    /// The ``Request/id`` of the request being adapted.
    public let requestID: UUID
    /// How many times the request has been retried: `0` for the first attempt.
    public let retryCount: Int
    /// The session running the request.
    public let session: Session

    /// A state, for calling an adapter yourself (in a test, or from an adapter of your own).
    public init(requestID: UUID, retryCount: Int = 0, session: Session) {
        self.requestID = requestID
        self.retryCount = retryCount
        self.session = session
    }
}
