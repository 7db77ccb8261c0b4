import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries what is safe to retry, with exponential backoff and full jitter, and honours
/// `Retry-After`: the retrier to give a session when a server or network may fail for a moment.
///
/// ```swift
/// let session = Session(interceptor: RetryPolicy())
/// ```
///
/// A failed attempt is retried when all of these hold:
/// - fewer than ``retryLimit`` retries have run;
/// - the method is idempotent (``retryableHTTPMethods``), the request carries an
///   `Idempotency-Key` header, or ``retriesNonIdempotentRequests`` is on: a `POST` the server may
///   have acted on is never sent twice unless the caller says so;
/// - the response's status is in ``retryableHTTPStatusCodes`` (it must have failed validation, so
///   call `validate()`), or it is `429` with a `Retry-After`, or the transport failed with a code in
///   ``retryableURLErrorCodes``: either one is enough, as in Alamofire.
///
/// ## Delay
///
/// Retry number `n` (counting from 0, as ``Request/retryCount`` does before it) waits a random time
/// up to `exponentialBackoffScale × exponentialBackoffBase^n`, capped at ``maximumBackoff``. The
/// random part ("full jitter") spreads out clients that failed together, so they do not come back
/// together. With the defaults (scale 0.5 s, base 2, at most 30 s):
///
/// | retry | `retryCount` | ceiling | delay drawn from |
/// |------:|-------------:|--------:|------------------|
/// | 1st   | 0            | 0.5 s   | 0 … 0.5 s        |
/// | 2nd   | 1            | 1 s     | 0 … 1 s          |
/// | 3rd   | 2            | 2 s     | 0 … 2 s          |
/// | 4th   | 3            | 4 s     | 0 … 4 s          |
/// | 7th   | 6            | 32 s → 30 s | 0 … 30 s     |
///
/// A `429` or `503` with `Retry-After` (seconds or an HTTP date) waits what the server asked
/// instead, at most ``maximumRetryAfter``.
///
/// ## Out-of-range settings
///
/// Durations and factors are read clamped, so no setting can make a delay trap: a negative or
/// NaN duration counts as 0, and any delay is at most ``longestDelay`` (so `.infinity` for
/// ``maximumBackoff`` or ``maximumRetryAfter`` means "no cap" in practice). A backoff ceiling
/// that overflows or is NaN (a huge or NaN base or scale) is ``maximumBackoff``.
public struct RetryPolicy: RequestInterceptor {
    /// The longest delay a policy asks for, in seconds (about 31 years): what an infinite or
    /// enormous setting, or `Retry-After` value, becomes.
    public static let longestDelay: TimeInterval = 1_000_000_000
    /// The default number of retries: two, so three attempts in all.
    public static let defaultRetryLimit = 2
    /// The default backoff base: each retry's ceiling doubles.
    public static let defaultExponentialBackoffBase = 2.0
    /// The default backoff scale: the first retry waits up to half a second.
    public static let defaultExponentialBackoffScale = 0.5
    /// The methods RFC 9110 calls idempotent, which a retry cannot apply twice.
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace]
    /// Statuses that say "try again": timeout, server errors a restart or a failover clears.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]
    /// Transport failures a second attempt may not meet: timeouts, lost or refused connections,
    /// name resolution, no network, a TLS failure or a certificate whose dates the clock may
    /// have misjudged, a body whose decoding broke off. Alamofire's set.
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .backgroundSessionInUseByAnotherProcess,
        .backgroundSessionWasDisconnected,
        .badServerResponse,
        .callIsActive,
        .cannotConnectToHost,
        .cannotFindHost,
        .cannotLoadFromNetwork,
        .dataNotAllowed,
        .dnsLookupFailed,
        .downloadDecodingFailedMidStream,
        .downloadDecodingFailedToComplete,
        .internationalRoamingOff,
        .networkConnectionLost,
        .notConnectedToInternet,
        .secureConnectionFailed,
        .serverCertificateHasBadDate,
        .serverCertificateNotYetValid,
        .timedOut,
    ]

    /// Failures no attempt will mend, never retried by this policy: ``CourierError/Kind/invalidResponse``,
    /// ``CourierError/Kind/invalidURL``, ``CourierError/Kind/bodyTooLarge``,
    /// ``CourierError/Kind/bufferLimitExceeded``, ``CourierError/Kind/streamLineTooLong`` and
    /// ``CourierError/Kind/credentialEncodingFailed``.
    public static let neverRetriedKinds: Set<CourierError.Kind> = [
        .invalidResponse, .invalidURL, .bodyTooLarge, .bufferLimitExceeded, .streamLineTooLong,
        .credentialEncodingFailed,
    ]

    /// The most retries of one request.
    public var retryLimit: Int
    /// How fast the delay ceiling grows: multiplied by this for each retry.
    public var exponentialBackoffBase: Double
    /// The first retry's delay ceiling, in seconds.
    public var exponentialBackoffScale: TimeInterval
    /// The largest delay ceiling backoff reaches, in seconds; at most ``longestDelay``.
    public var maximumBackoff: TimeInterval
    /// Whether each delay is drawn at random below its ceiling (on by default); off, it is the ceiling.
    public var usesJitter: Bool
    /// The longest `Retry-After` honoured, in seconds; a longer one waits this long. At most
    /// ``longestDelay``.
    public var maximumRetryAfter: TimeInterval
    /// The methods retried.
    public var retryableHTTPMethods: Set<HTTPMethod>
    /// Whether requests with other methods (such as `POST`) are retried too.
    public var retriesNonIdempotentRequests: Bool
    /// The response statuses retried.
    public var retryableHTTPStatusCodes: Set<Int>
    /// The transport failures retried.
    public var retryableURLErrorCodes: Set<URLError.Code>

    /// A policy; every parameter has the default described above.
    public init(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Double = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: TimeInterval = RetryPolicy.defaultExponentialBackoffScale,
        maximumBackoff: TimeInterval = 30,
        usesJitter: Bool = true,
        maximumRetryAfter: TimeInterval = 60,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retriesNonIdempotentRequests: Bool = false,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes
    ) {
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.maximumBackoff = maximumBackoff
        self.usesJitter = usesJitter
        self.maximumRetryAfter = maximumRetryAfter
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retriesNonIdempotentRequests = retriesNonIdempotentRequests
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
    }

    /// Retries after the backoff delay (or what `Retry-After` asks) when ``shouldRetry(_:dueTo:)``
    /// and the limit allow.
    public func retry(_ request: Request, for session: Session, dueTo error: CourierError) async -> RetryResult {
        guard request.retryCount < retryLimit, shouldRetry(request, dueTo: error) else { return .doNotRetry }
        // The head, not `response`: building an HTTPURLResponse costs more than the request did.
        if let head = request.responseHead, let serverDelay = RetryAfter.delay(in: head, now: Date()) {
            return .retryWithDelay(min(Self.clampedDelay(serverDelay), Self.clampedDelay(maximumRetryAfter)))
        }
        return .retryWithDelay(delay(forRetryCount: request.retryCount))
    }

    /// Whether `request`, failed with `error`, may run again, whatever the retry count.
    public func shouldRetry(_ request: Request, dueTo error: CourierError) -> Bool {
        guard let urlRequest = request.request else { return false }
        let method = HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET")
        let isIdempotent =
            retryableHTTPMethods.contains(method) || urlRequest.value(forHTTPHeaderField: "Idempotency-Key") != nil
        guard isIdempotent || retriesNonIdempotentRequests else { return false }
        // Failures another try will not mend, whatever URLError or status they carry: the server
        // spoke no valid HTTP, a body passed its limit, a URL was refused.
        if Self.neverRetriedKinds.contains(error.kind) { return false }
        // Either the status or the transport's error may say "again", as in Alamofire: a 503
        // whose body was then cut off is still a 503.
        if let head = request.responseHead {
            if retryableHTTPStatusCodes.contains(head.statusCode) { return true }
            if head.statusCode == 429, head.value(forHTTPHeaderField: "Retry-After") != nil { return true }
        }
        guard let code = error.urlError?.code else { return false }
        return retryableURLErrorCodes.contains(code)
    }

    /// The delay ceiling before the retry that follows `retryCount` retries: the table above.
    /// Always finite, between 0 and ``longestDelay`` (see "Out-of-range settings").
    public func delayCeiling(forRetryCount retryCount: Int) -> TimeInterval {
        let exponent = Double(max(0, retryCount))
        let cap = Self.clampedDelay(maximumBackoff)
        let ceiling = exponentialBackoffScale * pow(exponentialBackoffBase, exponent)
        return ceiling.isFinite ? min(Self.clampedDelay(ceiling), cap) : cap
    }

    /// `seconds` as a delay that converts to any clock's units: NaN and negatives are 0, and
    /// anything beyond ``longestDelay`` (infinity included) is that.
    static func clampedDelay(_ seconds: TimeInterval) -> TimeInterval {
        seconds.isNaN ? 0 : min(max(seconds, 0), longestDelay)
    }

    /// The delay before the retry that follows `retryCount` retries: at random below the ceiling
    /// with jitter, else the ceiling.
    public func delay(forRetryCount retryCount: Int) -> TimeInterval {
        var generator = SystemRandomNumberGenerator()
        return delay(forRetryCount: retryCount, using: &generator)
    }

    /// The delay before the retry that follows `retryCount` retries, drawn with `generator`.
    public func delay<Generator: RandomNumberGenerator>(
        forRetryCount retryCount: Int,
        using generator: inout Generator
    ) -> TimeInterval {
        let ceiling = delayCeiling(forRetryCount: retryCount)
        guard usesJitter, ceiling > 0 else { return ceiling }
        return Double.random(in: 0..<ceiling, using: &generator)
    }
}
