import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one line `courier` prints on stderr when a request fails, naming the host and the cause in
/// words: `could not connect to 127.0.0.1:9 (connection refused)`.
enum ErrorMessage {
    /// The message for `error`, met while requesting `url`; `timeout` is the `--timeout` in force,
    /// and `maximumTime` the `--max-time` when it has passed (a time-out is then its doing).
    static func describe(_ error: CourierError, url: URL, timeout: Double? = nil, maximumTime: Double? = nil) -> String
    {
        let endpoint = Self.endpoint(of: url)
        switch error.kind {
        case .invalidURL:
            // Courier's own words: the reason, and the URL without its user info.
            return error.errorDescription ?? "the URL is not valid"
        case .invalidResponse:
            return "\(endpoint) sent a response that is not valid HTTP (\(error.errorDescription ?? "malformed"))"
        case .bodyTooLarge, .bufferLimitExceeded:
            return error.errorDescription ?? "the response is larger than the limit"
        case .authenticationFailed:
            let scheme = error.refusedAuthenticationScheme ?? "its"
            return "\(endpoint) refused the credentials of --auth (\(scheme) authentication)"
        case .redirectFailed:
            switch error.redirectFailureReason {
            case .tooManyRedirects(let limit):
                return "too many redirects from \(endpoint) (more than \(limit); raise --max-redirects)"
            case .loop(let url):
                return "\(endpoint) redirected in a loop, back to \(url)"
            case .insecureRedirect(let url):
                return "\(endpoint) redirected from https to plain http (\(url)); not followed"
            case nil:
                return error.errorDescription ?? "a redirect could not be followed"
            }
        default:
            break
        }
        if let urlError = error.urlError {
            switch urlError.code {
            case .timedOut where maximumTime != nil:
                return "request to \(endpoint) did not finish within --max-time \(ByteCount.duration(maximumTime ?? 0))"
            case .cannotConnectToHost:
                return "could not connect to \(endpoint) (connection refused)"
            case .cannotFindHost, .dnsLookupFailed:
                return "could not resolve host \(url.host ?? endpoint)"
            case .timedOut:
                let after = timeout.map { " after \(ByteCount.duration($0))" } ?? ""
                return "request to \(endpoint) timed out\(after)"
            case .networkConnectionLost:
                return "the connection to \(endpoint) was lost before the response ended"
            case .notConnectedToInternet:
                return "could not connect to \(endpoint) (no network)"
            case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
                .serverCertificateNotYetValid:
                return "the TLS connection to \(endpoint) failed (the certificate is not trusted)"
            case .secureConnectionFailed:
                return "the TLS handshake with \(endpoint) failed (is it an HTTPS server?)"
            case .httpTooManyRedirects:
                return "too many redirects from \(endpoint) (raise --max-redirects)"
            case .badServerResponse:
                return "\(endpoint) sent a response that is not valid HTTP"
            case .cancelled:
                return "the request to \(endpoint) was cancelled"
            default:
                return "the request to \(endpoint) failed (\(urlError.localizedDescription))"
            }
        }
        switch error.kind {
        case .createUploadableFailed, .multipartEncodingFailed:
            return "could not read the body to send: \(underlying(error))"
        case .invalidHeader:
            return error.errorDescription ?? "a header cannot be sent"
        case .serverTrustEvaluationFailed where error.serverTrustFailureReason != nil:
            return "the TLS connection to \(endpoint) was refused: " + (error.errorDescription ?? "")
        case .serverTrustEvaluationFailed:
            return "the TLS connection to \(endpoint) failed (the certificate is not trusted)"
        default:
            return error.errorDescription ?? "the request failed"
        }
    }

    /// `host:port`, with the scheme's default port when the URL names none.
    static func endpoint(of url: URL) -> String {
        let host = url.host ?? url.absoluteString
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return "\(host):\(port)"
    }

    private static func underlying(_ error: CourierError) -> String {
        guard let cause = error.underlyingError else { return error.errorDescription ?? "unknown error" }
        if let cocoa = cause as? CocoaError, let path = cocoa.filePath {
            return "\(path): " + (cocoa.code == .fileReadNoSuchFile ? "no such file" : cocoa.localizedDescription)
        }
        return cause.localizedDescription
    }
}
