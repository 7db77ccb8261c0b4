import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// Adds `headers` in one assignment of `allHTTPHeaderFields`, keeping any header the request
    /// already has under the same name (compared case-insensitively) unless `replacing`.
    ///
    /// FoundationNetworking's `setValue(_:forHTTPHeaderField:)` validates the value and searches
    /// the existing fields with a Unicode-aware comparison on every call: about 17,000
    /// instructions a header, more than a whole request costs AsyncHTTPClient. Headers reaching
    /// here are checked by Courier (`HTTPHeaders.firstInvalidity`) before anything is sent.
    mutating func addHeaders(_ headers: HTTPHeaders, replacing: Bool) {
        guard !headers.isEmpty else { return }
        var fields = allHTTPHeaderFields ?? [:]
        var namesByLowercase: [String: String] = [:]
        for name in fields.keys { namesByLowercase[name.lowercased()] = name }
        for header in headers {
            let key = header.name.lowercased()
            if let existing = namesByLowercase[key] {
                guard replacing else { continue }
                fields[existing] = nil
            }
            fields[header.name] = header.value
            namesByLowercase[key] = header.name
        }
        allHTTPHeaderFields = fields
    }
}

// Alamofire's conveniences on URLRequest, so code that reads or sets them moves over unchanged.
extension URLRequest {
    /// The request's method as an ``HTTPMethod``; `nil` when it has none. Setting `nil` clears it
    /// (URLSession then sends `GET`).
    public var method: HTTPMethod? {
        get { httpMethod.map(HTTPMethod.init(rawValue:)) }
        set { httpMethod = newValue?.rawValue }
    }

    /// The request's headers as ``HTTPHeaders``. Setting replaces them all.
    public var headers: HTTPHeaders {
        get { allHTTPHeaderFields.map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { allHTTPHeaderFields = newValue.dictionary }
    }

    /// A request for `url` with `method` and `headers`: Alamofire's
    /// `URLRequest(url:method:headers:)`.
    ///
    /// - Throws: What `url` throws when it is no valid URL (a ``CourierError`` of kind
    ///   ``CourierError/Kind/invalidURL`` for a string).
    public init(url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders? = nil) throws {
        self.init(url: try url.asURL())
        self.method = method
        if let headers { allHTTPHeaderFields = headers.dictionary }
    }
}
