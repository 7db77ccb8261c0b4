/// Everything `courier [METHOD] URL [ITEM...]` was asked to do, decided from the arguments and
/// the terminal: the request, what to print, and how to run it.
struct ClientOptions: Sendable {
    /// The request to send.
    var plan: RequestPlan
    /// The parts of the exchange to print on stdout.
    var selection: PrintSelection
    /// The transport to run it on.
    var transport: TransportChoice = .nio
    /// `--follow`: follow redirects.
    var followsRedirects = false
    /// `--max-redirects`.
    var maximumRedirects = 30
    /// `--timeout`, in seconds: the longest an attempt may go without a byte moving.
    var timeout: Double?
    /// `--max-time`, in seconds: the longest the whole exchange may take, retries included.
    var maximumTime: Double?
    /// `--connect-timeout`, in seconds: the longest a connection may take to establish.
    var connectTimeout: Double?
    /// `--retry`: how many times to retry with Courier's ``RetryPolicy``.
    var retries = 0
    /// `--timings`: print each attempt's metrics on stderr.
    var showsTimings = false
    /// `--download`: save the body to a file.
    var downloads = false
    /// `--output`: the file to save to.
    var outputPath: String?
    /// `--continue`: resume the output file where it ends.
    var resumes = false
    /// `--check-status`: exit 3, 4 or 5 for a 3xx, 4xx or 5xx.
    var checksStatus = false
    /// `--offline`: print the request without sending it.
    var isOffline = false
    /// `--har`: the file the exchanges are recorded to, as HAR 1.2.
    var harPath: String?
    /// `--cacert`, `--cert`, `--key`, `--pinnedpubkey`, `--insecure`.
    var trust = TrustOptions()

    /// The idle timeout of each attempt: `--timeout` (60 s by default). URLSession has no
    /// timeout for connecting alone; its idle timeout covers the connection too, so on that
    /// transport `--connect-timeout` lowers it, for the whole attempt.
    var attemptTimeout: Double {
        let timeout = self.timeout ?? 60
        guard transport == .urlsession, let connectTimeout else { return timeout }
        return min(timeout, connectTimeout)
    }
}
