import Foundation

/// The one error type Courier reports: what failed (``kind``), the details of that failure, and
/// the error underneath, if any.
///
/// Check the family with ``kind`` (`error.kind == .responseValidationFailed`) or the shortcuts
/// (``isExplicitlyCancelledError``, ``responseCode``); ``underlyingError`` keeps what a transport,
/// encoder or decoder threw. Transport failures carry a `URLError` on both transports, so retry
/// policies read the same whichever one ran.
///
/// A struct rather than an enum so new failure families can be added without breaking a `switch`
/// in your code.
public struct CourierError: Error, Sendable {
    /// A family of failures. ``description`` is a fixed short name, safe for logs and metric labels.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The short name, e.g. `responseValidationFailed`.
        public let description: String

        private init(_ description: String) {
            self.description = description
        }

        /// A string or URL could not be made into a request URL.
        public static let invalidURL = Kind("invalidURL")
        /// A header cannot be sent: its name is not a token, or its value holds a control
        /// character (CR, LF, NUL, DEL…) that RFC 9110 forbids. The description never holds the value.
        public static let invalidHeader = Kind("invalidHeader")
        /// Parameters could not be encoded into the request.
        public static let parameterEncodingFailed = Kind("parameterEncodingFailed")
        /// A multipart form could not be encoded (for example, a file could not be read).
        public static let multipartEncodingFailed = Kind("multipartEncodingFailed")
        /// A request adapter failed, so the request was never sent.
        public static let requestAdaptationFailed = Kind("requestAdaptationFailed")
        /// A request retrier failed while deciding whether to retry.
        public static let requestRetryFailed = Kind("requestRetryFailed")
        /// A validator rejected the response (status code, content type, or a custom rule).
        public static let responseValidationFailed = Kind("responseValidationFailed")
        /// The response body could not be turned into the requested value.
        public static let responseSerializationFailed = Kind("responseSerializationFailed")
        /// The server was not trusted under the session's trust settings: a pin that did not
        /// match, a host no evaluator covers, a setting the transport cannot apply.
        /// ``serverTrustFailureReason`` says which. (A certificate the system's default checks
        /// refuse is a ``transportFailed`` with `URLError(.serverCertificateUntrusted)`, as in
        /// URLSession, unless the session has trust settings.)
        public static let serverTrustEvaluationFailed = Kind("serverTrustEvaluationFailed")
        /// A certificate or private key given to Courier could not be read: not PEM or DER, or
        /// not a certificate. The description never quotes a key.
        public static let invalidCertificate = Kind("invalidCertificate")
        /// The session was invalidated before or while the request ran.
        public static let sessionInvalidated = Kind("sessionInvalidated")
        /// The request was cancelled by the caller (or its Swift task was).
        public static let explicitlyCancelled = Kind("explicitlyCancelled")
        /// The transport failed: no connection, a timeout, a connection lost mid-body…
        public static let transportFailed = Kind("transportFailed")
        /// A body was larger than the configured limit.
        public static let bodyTooLarge = Kind("bodyTooLarge")
        /// An upload's body (a file or stream) could not be opened or read.
        public static let createUploadableFailed = Kind("createUploadableFailed")
        /// A download's temporary file could not be created or written (a full disk, say).
        public static let downloadFileWriteFailed = Kind("downloadFileWriteFailed")
        /// A finished download could not be moved to its destination.
        public static let downloadedFileMoveFailed = Kind("downloadedFileMoveFailed")
        /// Resume data was not made by Courier, is of an unknown version, or its partial file is gone.
        public static let invalidResumeData = Kind("invalidResumeData")
        /// The transport could not pause a transfer (URLSession on Linux) while the request was
        /// suspended, and more response bytes waited in memory than its limit allows.
        public static let bufferLimitExceeded = Kind("bufferLimitExceeded")
        /// The server's response is not valid HTTP: conflicting `Content-Length`s, a header block
        /// over the parser's limit, a malformed status line. The server's fault, which another
        /// attempt will not mend: ``RetryPolicy`` does not retry it.
        public static let invalidResponse = Kind("invalidResponse")
        /// A streamed body split into lines (JSON lines) sent a line longer than the limit, or
        /// no line break within it: the stream was stopped rather than held in memory without end.
        public static let streamLineTooLong = Kind("streamLineTooLong")
        /// A redirect was not followed, and the request failed for it: past the limit, back to
        /// a request already made, or from `https` down to `http`. ``redirectFailureReason``
        /// says which. (A `Location` that is no URL Courier sends to fails as ``invalidURL``.)
        public static let redirectFailed = Kind("redirectFailed")
        /// The server refused a credential Courier answered its challenge with: it answered
        /// `401` again. The description names the scheme, never the credential.
        public static let authenticationFailed = Kind("authenticationFailed")
        /// The credential cannot be written in the scheme it was to be sent with: a Basic user
        /// name with a `:`, or a control character in a Basic user name or password (RFC 7617).
        /// ``credentialEncodingFailureReason`` says which; the credential itself is never kept.
        public static let credentialEncodingFailed = Kind("credentialEncodingFailed")
        /// The request itself cannot be sent as built: a `GET` with a body, which servers and
        /// URLSession refuse or drop. ``urlRequestValidationFailureReason`` says what.
        public static let urlRequestValidationFailed = Kind("urlRequestValidationFailed")
        /// A custom request's delegate (``CustomRequestDelegate``) failed with an error of its
        /// own, which ``underlyingError`` keeps. (One that is a ``CourierError`` or a `URLError`
        /// is reported as itself, or as ``transportFailed``.)
        public static let customRequestFailed = Kind("customRequestFailed")
    }

    /// Why a request could not be sent as built.
    public enum URLRequestValidationFailureReason: Sendable {
        /// A `GET` request carries a body (here its bytes), as Alamofire also refuses: most
        /// servers ignore or reject it, and URLSession on Apple platforms fails it. Send the
        /// parameters in the query (`URLEncoding.queryString`), or use another method.
        case bodyDataInGETRequest(Data)
    }

    /// Why a credential could not be written for the scheme it was to be sent with.
    public enum CredentialEncodingFailureReason: Sendable, Equatable {
        /// The user name holds a `:`. Basic joins the user name and password with one, and the
        /// server splits at the first: it would read another user name and password, so the
        /// request fails rather than send them.
        case colonInBasicUserName
        /// The user name or password holds a control character (such as a line feed), which
        /// Basic credentials must not carry.
        case controlCharacterInBasicCredential
    }

    /// Why the session's trust settings refused a server.
    public enum ServerTrustFailureReason: Sendable {
        /// The ``ServerTrustManager`` has no evaluator for the host, and every host must be evaluated.
        case noRequiredEvaluator(host: String)
        /// No certificate of the server's chain (``ServerTrust/certificates``) is pinned; `seen`
        /// holds their public-key pins (``TLSCertificate/publicKeyPin``), to compare with yours.
        case certificatePinningFailed(host: String, seen: [String])
        /// No certificate of the server's chain (``ServerTrust/certificates``) has a pinned public
        /// key; `seen` holds the pins of their keys, the server's own first.
        case publicKeyPinningFailed(host: String, seen: [String])
        /// The handshake refused the server's certificate under the session's trust settings;
        /// `problem` says why: expired (and when), not valid yet, another host's, self-signed, or
        /// leading to a root the session does not trust.
        case certificateRejected(host: String, problem: String)
        /// The server refused the handshake over the client certificate: none was given, or it
        /// does not trust the one that was.
        case clientCertificateRefused(host: String, problem: String)
        /// The trust settings cannot be applied to this request (`reason` says why): the request
        /// failed before connecting rather than skip them.
        case unsupported(host: String, reason: String)
        /// A custom evaluator threw `error`.
        case customEvaluationFailed(host: String, error: any Error)

        /// The host the reason is about.
        public var host: String {
            switch self {
            case .noRequiredEvaluator(let host), .certificatePinningFailed(let host, _),
                .publicKeyPinningFailed(let host, _), .certificateRejected(let host, _),
                .clientCertificateRefused(let host, _), .unsupported(let host, _),
                .customEvaluationFailed(let host, _):
                return host
            }
        }
    }

    /// Why a redirect failed the request.
    public enum RedirectFailureReason: Sendable, Equatable {
        /// The server redirected once more after `limit` redirects had been followed.
        case tooManyRedirects(limit: Int)
        /// The redirect leads back to a request this attempt has made already (the same method,
        /// URL and cookies), so following it would go round until the limit.
        case loop(url: String)
        /// The redirect leads from `https` to plain `http`, which Courier refuses unless
        /// allowed (``Session/Configuration/allowsInsecureRedirects``, ``Request/redirect(allowingInsecureRedirects:)``).
        case insecureRedirect(url: String)
    }

    /// Why a validator rejected a response.
    public enum ValidationFailureReason: Sendable {
        /// The status code was not among the acceptable ones.
        case unacceptableStatusCode(code: Int)
        /// The response's content type matched none of the acceptable ones.
        case unacceptableContentType(acceptableContentTypes: [String], responseContentType: String)
        /// The response had a body but no `Content-Type`, and some were required.
        case missingContentType(acceptableContentTypes: [String])
        /// A custom validator threw this error.
        case customValidationFailed(error: any Error)
    }

    /// Why a serializer could not produce a value.
    public enum SerializationFailureReason: Sendable {
        /// The body was empty, and the serializer does not accept an empty body for this response.
        case inputDataNilOrZeroLength
        /// The status or method allowed an empty body (a 204, say), but the type being decoded
        /// has no empty value: make it ``EmptyResponse`` or decode ``Empty``. Holds the type's name.
        case invalidEmptyResponse(type: String)
        /// The body could not be decoded as text in this encoding.
        case stringSerializationFailed(encoding: String.Encoding)
        /// A `Decodable` value could not be decoded; the decoder's error is kept.
        case decodingFailed(error: any Error)
        /// The body is not JSON `JSONSerialization` reads (the deprecated `responseJSON`); its
        /// error is kept.
        case jsonSerializationFailed(error: any Error)
        /// A custom serializer threw this error.
        case customSerializationFailed(error: any Error)
        /// A download's file could not be read.
        case inputFileReadFailed(at: URL)
        /// A download finished without a file to serialize.
        case inputFileNil
    }

    private enum Detail: Sendable {
        case url(String, reason: String?)
        case header(name: String, reason: String)
        case validation(ValidationFailureReason)
        case serialization(SerializationFailureReason)
        case retry(retryError: any Error, originalError: any Error)
        case limit(Int)
        case response(reason: String, error: (any Error)?)
        case move(error: any Error, source: URL, destination: URL)
        case redirect(RedirectFailureReason)
        case authentication(scheme: String)
        case credential(CredentialEncodingFailureReason)
        case trust(ServerTrustFailureReason)
        case certificate(reason: String)
        case urlRequest(URLRequestValidationFailureReason)
        case underlying((any Error)?)
    }

    /// The family of the failure.
    public let kind: Kind
    private let detail: Detail

    private init(_ kind: Kind, _ detail: Detail) {
        self.kind = kind
        self.detail = detail
    }

    // MARK: - Making errors

    /// The request cannot be sent as built, for `reason`.
    public static func urlRequestValidationFailed(_ reason: URLRequestValidationFailureReason) -> CourierError {
        CourierError(.urlRequestValidationFailed, .urlRequest(reason))
    }

    /// Why the request could not be sent as built, for ``Kind/urlRequestValidationFailed``.
    public var urlRequestValidationFailureReason: URLRequestValidationFailureReason? {
        if case .urlRequest(let reason) = detail { return reason }
        return nil
    }

    /// `url` could not be made into a request URL.
    public static func invalidURL(_ url: String) -> CourierError {
        CourierError(.invalidURL, .url(URLRedaction.removingUserInfo(from: url), reason: nil))
    }

    /// `url` cannot be sent, for `reason` (an unsupported scheme, no host, a port above 65535…).
    ///
    /// User info (`user:password@`) is removed from the URL the error keeps, so it never reaches
    /// a log or a message.
    public static func invalidURL(_ url: String, reason: String) -> CourierError {
        CourierError(.invalidURL, .url(URLRedaction.removingUserInfo(from: url), reason: reason))
    }

    /// Header `name` cannot be sent, for `reason`.
    public static func invalidHeader(name: String, reason: String) -> CourierError {
        CourierError(.invalidHeader, .header(name: name, reason: reason))
    }

    /// Encoding parameters failed with `error`.
    public static func parameterEncodingFailed(_ error: any Error) -> CourierError {
        CourierError(.parameterEncodingFailed, .underlying(error))
    }

    /// Encoding a multipart form failed with `error`.
    public static func multipartEncodingFailed(_ error: any Error) -> CourierError {
        CourierError(.multipartEncodingFailed, .underlying(error))
    }

    /// A request adapter failed with `error`.
    public static func requestAdaptationFailed(_ error: any Error) -> CourierError {
        CourierError(.requestAdaptationFailed, .underlying(error))
    }

    /// A retrier failed with `retryError` while handling `originalError`.
    public static func requestRetryFailed(retryError: any Error, originalError: any Error) -> CourierError {
        CourierError(.requestRetryFailed, .retry(retryError: retryError, originalError: originalError))
    }

    /// A validator rejected the response for `reason`.
    public static func responseValidationFailed(_ reason: ValidationFailureReason) -> CourierError {
        CourierError(.responseValidationFailed, .validation(reason))
    }

    /// A serializer failed for `reason`.
    public static func responseSerializationFailed(_ reason: SerializationFailureReason) -> CourierError {
        CourierError(.responseSerializationFailed, .serialization(reason))
    }

    /// The server's certificate was not trusted; `error` says why.
    public static func serverTrustEvaluationFailed(_ error: (any Error)?) -> CourierError {
        CourierError(.serverTrustEvaluationFailed, .underlying(error))
    }

    /// The session's trust settings refused the server, for `reason`.
    public static func serverTrustEvaluationFailed(reason: ServerTrustFailureReason) -> CourierError {
        CourierError(.serverTrustEvaluationFailed, .trust(reason))
    }

    /// A certificate or key could not be read, for `reason` (which quotes none of it).
    public static func invalidCertificate(reason: String) -> CourierError {
        CourierError(.invalidCertificate, .certificate(reason: reason))
    }

    /// The session was invalidated, with `error` if it was invalidated by one.
    public static func sessionInvalidated(_ error: (any Error)?) -> CourierError {
        CourierError(.sessionInvalidated, .underlying(error))
    }

    /// The request was cancelled by the caller.
    public static let explicitlyCancelled = CourierError(.explicitlyCancelled, .underlying(nil))

    /// The transport failed with `error`, a `URLError` whose code says what happened.
    public static func transportFailed(_ error: URLError) -> CourierError {
        CourierError(.transportFailed, .underlying(error))
    }

    /// How a transport's failure reaches the caller: a body that could not be opened (reported as
    /// `.cannotOpenFile` with the cause underneath) as ``Kind/createUploadableFailed``; a
    /// ``CourierError`` the transport carried under `NSUnderlyingErrorKey` (a redirect to a URL
    /// Courier refuses, a body over its limit) as itself; anything else as ``Kind/transportFailed``.
    static func attemptFailed(_ error: URLError) -> CourierError {
        if error.code == .cannotOpenFile, let cause = error.userInfo[NSUnderlyingErrorKey] as? any Error {
            return (cause as? CourierError) ?? .createUploadableFailed(cause)
        }
        if let carried = error.userInfo[NSUnderlyingErrorKey] as? CourierError { return carried }
        return .transportFailed(error)
    }

    /// A custom request's delegate failed with `error`.
    public static func customRequestFailed(_ error: any Error) -> CourierError {
        CourierError(.customRequestFailed, .underlying(error))
    }

    /// A body exceeded `limit` bytes.
    public static func bodyTooLarge(limit: Int) -> CourierError {
        CourierError(.bodyTooLarge, .limit(limit))
    }

    /// More than `limit` response bytes waited in memory for a suspended request whose transfer
    /// the transport cannot pause (see `URLSessionTransport.maximumHeldBytes`).
    public static func bufferLimitExceeded(limit: Int) -> CourierError {
        CourierError(.bufferLimitExceeded, .limit(limit))
    }

    /// The server's response is not valid HTTP, for `reason` (which names no header value);
    /// `error` is what the transport's parser reported, if anything.
    public static func invalidResponse(reason: String, underlying error: (any Error)? = nil) -> CourierError {
        CourierError(.invalidResponse, .response(reason: reason, error: error))
    }

    /// An upload's body could not be opened or read, for `error`.
    public static func createUploadableFailed(_ error: any Error) -> CourierError {
        CourierError(.createUploadableFailed, .underlying(error))
    }

    /// A download's temporary file could not be created or written, for `error`.
    public static func downloadFileWriteFailed(_ error: any Error) -> CourierError {
        CourierError(.downloadFileWriteFailed, .underlying(error))
    }

    /// Moving a finished download from `source` to `destination` failed with `error`.
    public static func downloadedFileMoveFailed(error: any Error, source: URL, destination: URL) -> CourierError {
        CourierError(.downloadedFileMoveFailed, .move(error: error, source: source, destination: destination))
    }

    /// Resume data could not be used, for `error`.
    public static func invalidResumeData(_ error: any Error) -> CourierError {
        CourierError(.invalidResumeData, .underlying(error))
    }

    /// A streamed body had a line longer than `limit` bytes (not counting its line break).
    public static func streamLineTooLong(limit: Int) -> CourierError {
        CourierError(.streamLineTooLong, .limit(limit))
    }

    /// A redirect failed the request, for `reason`. User info is removed from the URL the reason
    /// keeps, so that it never reaches a log or a message.
    public static func redirectFailed(_ reason: RedirectFailureReason) -> CourierError {
        switch reason {
        case .tooManyRedirects:
            return CourierError(.redirectFailed, .redirect(reason))
        case .loop(let url):
            return CourierError(.redirectFailed, .redirect(.loop(url: URLRedaction.removingUserInfo(from: url))))
        case .insecureRedirect(let url):
            return CourierError(
                .redirectFailed,
                .redirect(.insecureRedirect(url: URLRedaction.removingUserInfo(from: url)))
            )
        }
    }

    // MARK: - Reading errors

    /// Whether the caller cancelled the request.
    public var isExplicitlyCancelledError: Bool { kind == .explicitlyCancelled }

    /// The unacceptable status code, when validation rejected one.
    public var responseCode: Int? {
        if case .validation(.unacceptableStatusCode(let code)) = detail { return code }
        return nil
    }

    /// Why validation failed, when it did.
    public var validationFailureReason: ValidationFailureReason? {
        if case .validation(let reason) = detail { return reason }
        return nil
    }

    /// Why serialization failed, when it did.
    public var serializationFailureReason: SerializationFailureReason? {
        if case .serialization(let reason) = detail { return reason }
        return nil
    }

    /// The server answered `401` again to the credential Courier sent for `scheme` (`Basic`,
    /// `Digest`).
    public static func authenticationFailed(scheme: String) -> CourierError {
        CourierError(.authenticationFailed, .authentication(scheme: scheme))
    }

    /// The credential cannot be written for its scheme, for `reason`.
    public static func credentialEncodingFailed(_ reason: CredentialEncodingFailureReason) -> CourierError {
        CourierError(.credentialEncodingFailed, .credential(reason))
    }

    /// Why the credential could not be written, for ``Kind/credentialEncodingFailed``.
    public var credentialEncodingFailureReason: CredentialEncodingFailureReason? {
        if case .credential(let reason) = detail { return reason }
        return nil
    }

    /// The scheme whose credential the server refused, for ``Kind/authenticationFailed``.
    public var refusedAuthenticationScheme: String? {
        if case .authentication(let scheme) = detail { return scheme }
        return nil
    }

    /// Why the session's trust settings refused the server, for ``Kind/serverTrustEvaluationFailed``.
    public var serverTrustFailureReason: ServerTrustFailureReason? {
        if case .trust(let reason) = detail { return reason }
        return nil
    }

    /// Why a redirect failed the request, for ``Kind/redirectFailed``.
    public var redirectFailureReason: RedirectFailureReason? {
        if case .redirect(let reason) = detail { return reason }
        return nil
    }

    /// For ``Kind/requestRetryFailed``, the error the request had failed with before the retrier
    /// threw (``underlyingError`` is the retrier's); `nil` for other kinds.
    public var originalError: (any Error)? {
        if case .retry(_, let originalError) = detail { return originalError }
        return nil
    }

    /// Where a finished download was, for ``Kind/downloadedFileMoveFailed``; `nil` otherwise.
    /// Alamofire's `sourceURL`.
    public var sourceURL: URL? {
        guard case .move(_, let source, _) = detail else { return nil }
        return source
    }

    /// Where a finished download was to be moved, for ``Kind/downloadedFileMoveFailed``; `nil`
    /// otherwise. Alamofire's `destinationURL`.
    public var destinationURL: URL? {
        guard case .move(_, _, let destination) = detail else { return nil }
        return destination
    }

    /// The error underneath: what a transport, encoder, decoder, adapter or retrier threw. Too
    /// many redirects reads as `URLError(.httpTooManyRedirects)` here, as URLSession reports it.
    public var underlyingError: (any Error)? {
        switch detail {
        case .redirect(.tooManyRedirects): return URLError(.httpTooManyRedirects)
        case .redirect, .authentication, .credential, .urlRequest, .certificate: return nil
        case .trust(.customEvaluationFailed(_, let error)): return error
        case .trust: return nil
        case .underlying(let error): return error
        case .retry(let retryError, _): return retryError
        case .move(let error, _, _): return error
        case .validation(.customValidationFailed(let error)): return error
        case .serialization(.decodingFailed(let error)), .serialization(.customSerializationFailed(let error)),
            .serialization(.jsonSerializationFailed(let error)):
            return error
        case .response(_, let error): return error
        case .url, .header, .validation, .serialization, .limit: return nil
        }
    }

    /// The `URLError` of a transport failure, whose `code` reads the same on both transports.
    public var urlError: URLError? {
        underlyingError as? URLError
    }

    /// The URL that could not be used, for ``Kind/invalidURL``.
    public var invalidURLString: String? {
        if case .url(let url, _) = detail { return url }
        return nil
    }

    /// Why the URL was refused, for ``Kind/invalidURL`` when Courier checked it before sending
    /// (for example "its port is above 65535"); `nil` when it could not be parsed at all.
    public var invalidURLReason: String? {
        if case .url(_, let reason) = detail { return reason }
        return nil
    }
}

extension CourierError: LocalizedError, CustomStringConvertible {
    /// What went wrong, in words a person can act on.
    public var errorDescription: String? {
        switch detail {
        case .url(let url, let reason?):
            return "The URL \"\(url)\" cannot be used: \(reason)."
        case .url(let url, nil):
            return "The URL \"\(url)\" is not valid: check its scheme and host."
        case .header(_, let reason):
            return "A header cannot be sent: \(reason)."
        case .validation(let reason):
            return Self.describe(reason)
        case .serialization(let reason):
            return Self.describe(reason)
        case .retry(let retryError, let originalError):
            return "Deciding whether to retry failed with \(retryError.localizedDescription) "
                + "(the request had failed with \(originalError.localizedDescription))."
        case .response(let reason, _):
            return "The server's response is not valid HTTP: \(reason)."
        case .limit(let limit) where kind == .bufferLimitExceeded:
            return "More than \(limit) response bytes waited for a consumer that fell behind, and this "
                + "transport cannot pause the transfer; read faster, or raise the limit."
        case .limit(let limit) where kind == .streamLineTooLong:
            return "A line of the streamed body is longer than the limit of \(limit) bytes "
                + "(the server sent no line break within it)."
        case .limit(let limit):
            return "The body is larger than the limit of \(limit) bytes; raise "
                + "Session.Configuration.maximumResponseBodySize, or use a download or a stream request."
        case .move(let error, let source, let destination):
            return "The download could not be moved from \(source.path) to \(destination.path): "
                + error.localizedDescription
        case .redirect(.tooManyRedirects(let limit)):
            return "The server redirected more than \(limit) times; raise the limit with "
                + "Session.Configuration.redirectLimit or Request.redirect(limit:) if that is expected."
        case .redirect(.loop(let url)):
            return "The server redirected back to \"\(url)\", a request already made: the redirects go round."
        case .urlRequest(.bodyDataInGETRequest(let body)):
            // The size only: a body may hold credentials.
            return "A GET request cannot carry a body (this one has \(body.count) bytes); send the parameters "
                + "in the query, or use another method."
        case .authentication(let scheme):
            return "The server refused the credential sent for its \(scheme) challenge (401 again); "
                + "check the user name and password."
        case .credential(.colonInBasicUserName):
            return "The user name holds a \":\", which Basic authentication cannot send: the server would "
                + "read the user name as ending there."
        case .credential(.controlCharacterInBasicCredential):
            return "The user name or password holds a control character, which Basic authentication cannot send."
        case .redirect(.insecureRedirect(let url)):
            return "The server redirected from https to plain http (\"\(url)\"); allow it with "
                + "Session.Configuration.allowsInsecureRedirects if you must."
        case .trust(let reason):
            return Self.describe(reason)
        case .certificate(let reason):
            return "The certificate or key could not be read: \(reason)."
        case .underlying(let error):
            let cause = error.map { ": \($0.localizedDescription)" } ?? "."
            switch kind {
            case .explicitlyCancelled: return "The request was cancelled."
            case .sessionInvalidated: return "The session was invalidated\(cause)"
            case .serverTrustEvaluationFailed: return "The server's certificate is not trusted\(cause)"
            case .parameterEncodingFailed: return "The parameters could not be encoded\(cause)"
            case .multipartEncodingFailed: return "The multipart form could not be encoded\(cause)"
            case .requestAdaptationFailed: return "Adapting the request failed\(cause)"
            case .createUploadableFailed: return "The upload's body could not be read\(cause)"
            case .downloadFileWriteFailed: return "The download could not be written to disk\(cause)"
            case .invalidResumeData: return "The resume data cannot be used\(cause)"
            case .customRequestFailed: return "The custom request's operation failed\(cause)"
            default: return "The request failed\(cause)"
            }
        }
    }

    /// ``kind`` and the description.
    public var description: String {
        "CourierError.\(kind): \(errorDescription ?? "")"
    }

    private static func describe(_ reason: ServerTrustFailureReason) -> String {
        switch reason {
        case .noRequiredEvaluator(let host):
            return "The server trust manager has no evaluator for \(host), and every host must be evaluated; "
                + "add one for it, or create the manager with allHostsMustBeEvaluated: false."
        case .certificatePinningFailed(let host, let seen):
            return "\(host) showed no pinned certificate; it showed keys \(seen.joined(separator: ", "))."
        case .publicKeyPinningFailed(let host, let seen):
            return "\(host) showed no pinned public key; it showed \(seen.joined(separator: ", "))."
        case .certificateRejected(let host, let problem):
            return "The certificate of \(host) is not trusted under the session's trust settings: \(problem)."
        case .clientCertificateRefused(let host, let problem):
            return "\(host) refused the TLS handshake over the client certificate: \(problem)."
        case .unsupported(let host, let reason):
            return "The trust settings for \(host) cannot be applied: \(reason); the request was not sent."
        case .customEvaluationFailed(let host, let error):
            return "The trust evaluator refused \(host): \(error.localizedDescription)"
        }
    }

    private static func describe(_ reason: ValidationFailureReason) -> String {
        switch reason {
        case .unacceptableStatusCode(let code):
            return "The server answered with status code \(code), which the request does not accept."
        case .unacceptableContentType(let acceptable, let actual):
            return "The response's content type \(actual) is none of the accepted types: "
                + acceptable.joined(separator: ", ") + "."
        case .missingContentType(let acceptable):
            return "The response has no Content-Type; it must be one of: \(acceptable.joined(separator: ", "))."
        case .customValidationFailed(let error):
            return "Validation failed: \(error.localizedDescription)"
        }
    }

    private static func describe(_ reason: SerializationFailureReason) -> String {
        switch reason {
        case .inputDataNilOrZeroLength:
            return "The response body is empty, and an empty body is not acceptable for this response."
        case .stringSerializationFailed(let encoding):
            return "The response body is not valid text in the \(encoding) encoding."
        case .decodingFailed(let error):
            return "The response body could not be decoded: \(error)"
        case .jsonSerializationFailed(let error):
            return "The response body is not JSON: \(error.localizedDescription)"
        case .customSerializationFailed(let error):
            return "The response could not be serialized: \(error.localizedDescription)"
        case .inputFileReadFailed(let url):
            return "The downloaded file \(url.path) could not be read."
        case .inputFileNil:
            return "The download left no file to serialize."
        case .invalidEmptyResponse(let type):
            return "The response body is empty (as its status or the request's method allows), but \(type) has no "
                + "empty value; decode Empty, or make \(type) conform to EmptyResponse."
        }
    }
}
