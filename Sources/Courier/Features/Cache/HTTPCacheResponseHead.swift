/// The parts of a response the cache reads and stores: the status code and headers.
///
/// A plain value, so that the cache's rules do not depend on the transport's head type;
/// ``init(_:)`` takes them from a ``ResponseHead``.
struct HTTPCacheResponseHead: Equatable, Sendable {
    /// The status code.
    var statusCode: Int
    /// The headers; several fields of one name joined with `", "`.
    var headers: HTTPHeaders

    init(statusCode: Int, headers: HTTPHeaders) {
        self.statusCode = statusCode
        self.headers = headers
    }

    /// The status code and headers of `head`.
    init(_ head: ResponseHead) {
        self.init(statusCode: head.statusCode, headers: head.headers)
    }
}
