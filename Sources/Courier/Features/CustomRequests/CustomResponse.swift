import Foundation

/// What a ``CustomRequestDelegate`` answers with when its operation succeeds: a status code,
/// headers and a body, which the request validates and serializes as it would a server's.
///
/// A failure is passed as an `Error` instead (``CustomRequestCompletionHandler/broadcastFailure(_:)``).
public struct CustomResponse: Sendable {
    /// The status code, 100…999; another fails the request with ``CourierError/Kind/invalidResponse``.
    public var statusCode: Int
    /// The headers, such as `Content-Type`, which `validate(contentType:)` and the string
    /// serializer read.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Data
    /// The URL to report the response as coming from; `nil` reports the request's.
    public var url: URL?

    /// A response; by default a `200` with no headers and an empty body.
    public init(statusCode: Int = 200, headers: HTTPHeaders = [], body: Data = Data(), url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
    }
}
