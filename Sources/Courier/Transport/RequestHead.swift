import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one attempt sends, as Courier holds it: the method, the URL, the headers and the
/// timeout, readable without building a `URLRequest`. It is to the request what ``ResponseHead``
/// is to the response.
///
/// On Linux a `URLRequest` is a FoundationNetworking object whose every header change validates
/// the value and searches the existing fields: building one and reading it back cost
/// AsyncHTTPClient's transport more than a tenth of a request. A request made from a URL, a
/// method and headers is carried as these parts; ``urlRequest`` builds the `URLRequest` only when
/// something asks for it (``Request/request``, an adapter, a serializer or monitor written
/// against `URLRequest`, or URLSession itself). A request that began as a `URLRequest` (a
/// ``URLRequestConvertible`` of your own, an adapted request, a body set with
/// `requestModifier`) keeps that `URLRequest`, with everything URLSession reads beyond these
/// parts, and ``urlRequest`` returns it.
public struct RequestHead: Sendable {
    /// The parts, shared between copies until one changes (copy-on-write): a head is copied
    /// about fifteen times a request, and each copy of the parts themselves retained seven
    /// references.
    private final class Storage: @unchecked Sendable {
        // @unchecked Sendable: a `Storage` is changed only through `RequestHead.parts`, which
        // copies it first unless the head holds the only reference; one shared between heads,
        // and so between threads, is never changed. The fields skip Swift's run-time exclusivity
        // checks (`@exclusivity`; about 80 instructions a read, and a head is read some 20 times a
        // request): `Storage` is private and its fields are reached only through `RequestHead`'s
        // accessors, one at a time, so two overlapping accesses to a field would first need two
        // overlapping accesses to the head, which Swift still checks where the head lives.
        @exclusivity(unchecked) var method: HTTPMethod
        @exclusivity(unchecked) var url: URL
        @exclusivity(unchecked) var headers: HTTPHeaders
        @exclusivity(unchecked) var timeoutInterval: TimeInterval
        @exclusivity(unchecked) var source: URLRequest?
        @exclusivity(unchecked) var isURLChecked = false
        @exclusivity(unchecked) var serverTrustPolicy: ServerTrustPolicy?
        @exclusivity(unchecked) var cacheMode = RequestCacheMode.default
        @exclusivity(unchecked) var cacheDecision: (@Sendable (ResponseHead) async -> ResponseHead?)?

        init(method: HTTPMethod, url: URL, headers: HTTPHeaders, timeoutInterval: TimeInterval, source: URLRequest?) {
            self.method = method
            self.url = url
            self.headers = headers
            self.timeoutInterval = timeoutInterval
            self.source = source
        }

        func copy() -> Storage {
            let copy = Storage(
                method: method,
                url: url,
                headers: headers,
                timeoutInterval: timeoutInterval,
                source: source
            )
            copy.isURLChecked = isURLChecked
            copy.serverTrustPolicy = serverTrustPolicy
            copy.cacheMode = cacheMode
            copy.cacheDecision = cacheDecision
            return copy
        }
    }

    private var storage: Storage

    /// The parts, to change: copied first unless this head is their only holder.
    private var parts: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// The method.
    public private(set) var method: HTTPMethod {
        get { storage.method }
        _modify { yield &parts.method }
    }
    /// The URL.
    public private(set) var url: URL {
        get { storage.url }
        _modify {
            let parts = self.parts
            // Cleared however the change ends, as a `didSet` would be.
            defer { parts.isURLChecked = false }
            yield &parts.url
        }
    }
    /// The header fields, in the order they go out.
    public private(set) var headers: HTTPHeaders {
        get { storage.headers }
        _modify { yield &parts.headers }
    }
    /// The longest the attempt may go without sending or receiving a byte, in seconds.
    public private(set) var timeoutInterval: TimeInterval {
        get { storage.timeoutInterval }
        _modify { yield &parts.timeoutInterval }
    }
    /// The `URLRequest` the head was read from, kept in step with the parts; `nil` for a head
    /// made from parts.
    private var source: URLRequest? {
        get { storage.source }
        _modify { yield &parts.source }
    }
    /// Whether ``url`` passed ``URLValidation`` (a session checks every head it sends), so a
    /// transport need not check it again: about 4,000 instructions a request on Linux. Cleared
    /// when the URL changes.
    @_spi(CourierTransport) public internal(set) var isURLChecked: Bool {
        get { storage.isURLChecked }
        _modify { yield &parts.isURLChecked }
    }
    /// How the transport must check the server, for an `https` request of a session with trust
    /// settings (``Session/Configuration/serverTrustManager``, ``Session/Configuration/trustRoots``,
    /// ``Session/Configuration/clientCertificate``); `nil` for the system's default checks. Only
    /// a ``ServerTrustEnforcing`` transport is handed one.
    @_spi(CourierTransport) public internal(set) var serverTrustPolicy: ServerTrustPolicy? {
        get { storage.serverTrustPolicy }
        _modify { yield &parts.serverTrustPolicy }
    }
    /// How the request uses Courier's ``HTTPCache``, when the session has one
    /// (``Request/cache(_:)``); a `URLRequest`'s own `cachePolicy` counts when this is `default`.
    var cacheMode: RequestCacheMode {
        get { storage.cacheMode }
        _modify { yield &parts.cacheMode }
    }
    /// Asks the request's ``CachedResponseHandler`` what to store for a response; `nil` when
    /// there is none to ask (everything the rules allow is stored).
    var cacheDecision: (@Sendable (ResponseHead) async -> ResponseHead?)? {
        get { storage.cacheDecision }
        _modify { yield &parts.cacheDecision }
    }

    /// The cache mode the head asks for: ``cacheMode``, else what the `URLRequest` it was read
    /// from asks for with its `cachePolicy`.
    var effectiveCacheMode: RequestCacheMode {
        guard cacheMode == .default, let policy = source?.cachePolicy else { return cacheMode }
        return RequestCacheMode(policy)
    }

    /// A head from its parts; the `URLRequest` is built only when asked for.
    public init(method: HTTPMethod, url: URL, headers: HTTPHeaders = HTTPHeaders(), timeoutInterval: TimeInterval = 60)
    {
        storage = Storage(method: method, url: url, headers: headers, timeoutInterval: timeoutInterval, source: nil)
    }

    /// The head of `urlRequest`, which ``urlRequest`` then returns as it is; `nil` if it has no URL.
    public init?(_ urlRequest: URLRequest) {
        guard let url = urlRequest.url else { return nil }
        storage = Storage(
            method: HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET"),
            url: url,
            headers: HTTPHeaders(urlRequest.allHTTPHeaderFields ?? [:]),
            timeoutInterval: urlRequest.timeoutInterval,
            source: urlRequest
        )
    }

    /// The request as a `URLRequest`: the one the head was read from, or one built from the
    /// parts (each time it is read: keep it if you read it often).
    public var urlRequest: URLRequest {
        if let source { return source }
        var request = URLRequest(url: url, timeoutInterval: timeoutInterval)
        // `GET` is a new request's method already; FoundationNetworking's setter costs some 4,000
        // instructions even so.
        if method != .get { request.httpMethod = method.rawValue }
        // One assignment: FoundationNetworking's per-header setter costs far more (see `addHeaders`).
        if !headers.isEmpty { request.allHTTPHeaderFields = headers.dictionary }
        return request
    }

    /// The in-memory body of the `URLRequest` the head was read from, if it has one: what a
    /// transport sends when it is given no body of its own.
    public var httpBody: Data? { source?.httpBody }
    /// The body stream of the `URLRequest` the head was read from, if it has one (read once).
    public var httpBodyStream: InputStream? { source?.httpBodyStream }

    /// Adds `headers`, keeping a header the head has already under the same name unless `replacing`.
    mutating func addHeaders(_ added: HTTPHeaders, replacing: Bool) {
        guard !added.isEmpty else { return }
        for header in added where replacing || headers.value(for: header.name) == nil {
            headers.update(header)
        }
        source?.addHeaders(added, replacing: replacing)
    }

    /// Drops the in-memory body and body stream, if any.
    mutating func removeBody() {
        guard source?.httpBody != nil || source?.httpBodyStream != nil else { return }
        source?.httpBody = nil
        source?.httpBodyStream = nil
    }

    /// Replaces every header with `headers`.
    mutating func replaceHeaders(with headers: HTTPHeaders) {
        self.headers = headers
        source?.allHTTPHeaderFields = headers.dictionary
    }

    /// Sets header `name` to `value`, or removes it when `value` is `nil`.

    mutating func setHeader(_ value: String?, for name: String) {
        headers[name] = value
        source?.setValue(value, forHTTPHeaderField: name)
    }

    /// The request `hop` leads to from this one: its URL and method; without a body and the
    /// headers that describe one when the method became GET; without the credential headers
    /// when it leaves the origin; and without a `Host` set by hand, which would name the last
    /// hop's host. Its URL was checked by ``RedirectPolicy/nextHop(status:location:method:from:)``.
    func redirected(by hop: RedirectPolicy.Hop) -> RequestHead {
        var next = self
        next.url = hop.url
        next.source?.url = hop.url
        next.isURLChecked = true
        if hop.method != method.rawValue {
            next.method = HTTPMethod(rawValue: hop.method)
            next.source?.httpMethod = hop.method
        }
        var dropped = ["Host"]
        if hop.dropsBody {
            dropped += RedirectPolicy.bodyHeaders
            next.source?.httpBody = nil
            next.source?.httpBodyStream = nil
        }
        if hop.leavesOrigin { dropped += RedirectPolicy.credentialHeaders }
        for name in dropped where next.headers.value(for: name) != nil {
            next.setHeader(nil, for: name)
        }
        return next
    }

    /// The head with the URL's user info (`http://user:pass@host/`) taken out of the URL and,
    /// unless the head has an `Authorization` header already, sent as `Authorization: Basic`.
    ///
    /// URLSession would send the user info as Basic authentication and AsyncHTTPClient would
    /// ignore it; done here, for every attempt, both transports send the same request. Out of the
    /// URL, the credentials cannot reach a log line, a description or an error message that
    /// prints the URL; the header is redacted where Courier prints headers.
    ///
    /// - Throws: ``CourierError/Kind/credentialEncodingFailed`` when the user info cannot be sent
    ///   as Basic: a user name that decodes to one with a `:` (`%3A`), or a control character.
    func movingUserInfoToAuthorization() throws(CourierError) -> RequestHead {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return self }
        let user = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 } ?? ""
        let password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 } ?? ""
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        guard let stripped = components.url else { return self }
        var head = self
        head.url = stripped
        head.source?.url = stripped
        if headers.value(for: "Authorization") == nil {
            head.setHeader(try BasicAuthentication.authorization(user: user, password: password), for: "Authorization")
        }
        return head
    }
}

/// The request a ``DataResponse`` reports: the `URLRequest` it was given, or the head Courier
/// sent, whose `URLRequest` is built only when read.
enum ReportedRequest: Sendable {
    case urlRequest(URLRequest)
    case head(RequestHead)

    init?(_ urlRequest: URLRequest?) {
        guard let urlRequest else { return nil }
        self = .urlRequest(urlRequest)
    }

    init?(_ head: RequestHead?) {
        guard let head else { return nil }
        self = .head(head)
    }

    var urlRequest: URLRequest {
        switch self {
        case .urlRequest(let request): return request
        case .head(let head): return head.urlRequest
        }
    }

    var head: RequestHead? {
        switch self {
        case .urlRequest(let request): return RequestHead(request)
        case .head(let head): return head
        }
    }
}
