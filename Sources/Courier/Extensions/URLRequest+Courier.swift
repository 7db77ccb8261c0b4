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

extension URLRequest {
    /// The request with the URL's user info (`http://user:pass@host/`) taken out of the URL and,
    /// unless the request has an `Authorization` header already, sent as `Authorization: Basic`.
    ///
    /// URLSession would send the user info as Basic authentication and AsyncHTTPClient would
    /// ignore it; done here, for every attempt, both transports send the same request. Out of the
    /// URL, the credentials cannot reach a log line, a description or an error message that
    /// prints the URL; the header is redacted where Courier prints headers.
    func movingUserInfoToAuthorization() -> URLRequest {
        guard let url, url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return self }
        let user = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 } ?? ""
        let password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 } ?? ""
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        guard let stripped = components.url else { return self }
        var request = self
        request.url = stripped
        if value(forHTTPHeaderField: "Authorization") == nil {
            let token = Data("\(user):\(password)".utf8).base64EncodedString()
            request.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
        }
        return request
    }
}
