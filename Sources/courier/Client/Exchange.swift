import Courier
import CourierHAR
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One run of `courier [METHOD] URL [ITEM...]`: sends the planned request through a Courier
/// ``Session`` and prints what was asked, returning the process's exit code.
///
/// Bodies without files are sent as a ``DataStreamRequest`` so the response is written as it
/// arrives (exact bytes, constant memory, a live progress bar); file and multipart bodies use
/// ``Session/upload(_:to:method:headers:interceptor:requestModifier:)`` and its multipart sibling.
struct Exchange {
    /// What to do.
    let options: ClientOptions
    /// Where to write.
    let terminal: Terminal
    /// When the exchange began, to tell a `--max-time` that passed from an attempt's time-out.
    let start = ContinuousClock.now

    /// Runs the exchange.
    func run() async -> Int32 {
        let form = makeMultipartForm()
        let headers = displayedHeaders(form: form)
        printRequest(headers: headers, form: form)
        if options.isOffline { return ExitStatus.success }

        let recorder = options.harPath.map { _ in HARRecorder() }
        let session = makeSession(recordingTo: recorder)
        var code: Int32
        if options.downloads {
            code = await download(with: session)
        } else {
            switch options.plan.body {
            case .none, .data:
                code = await stream(with: session)
            case .file(let path):
                code = await collect(
                    authenticating(
                        session.upload(
                            URL(fileURLWithPath: path),
                            to: options.plan.url,
                            method: HTTPMethod(rawValue: options.plan.method),
                            headers: options.plan.headers
                        )
                    )
                )
            case .multipart:
                code = await collect(
                    authenticating(
                        session.upload(
                            multipartFormData: form ?? MultipartFormData(),
                            to: options.plan.url,
                            method: HTTPMethod(rawValue: options.plan.method),
                            headers: options.plan.headers
                        )
                    )
                )
            }
        }
        await session.invalidate()
        if let recorder, let path = options.harPath {
            let written = await write(recorder, to: path)
            if code == ExitStatus.success, !written { code = ExitStatus.failure }
        }
        return code
    }

    /// Writes what `recorder` heard to `path` once it has heard it all; `false`, said on
    /// stderr, when the file cannot be written.
    private func write(_ recorder: HARRecorder, to path: String) async -> Bool {
        // The requests have finished, so their last events are queued: this runs after them.
        await withCheckedContinuation { continuation in
            recorder.queue.async { continuation.resume() }
        }
        do {
            try recorder.write(to: URL(fileURLWithPath: path))
            return true
        } catch {
            terminal.error("courier: cannot write the HAR file \(path): \(error.localizedDescription)\n")
            return false
        }
    }

    // MARK: - Session and request

    /// `--retry`'s policy, or `nil` without it.
    var retryPolicy: RetryPolicy? {
        options.retries > 0 ? RetryPolicy(retryLimit: options.retries) : nil
    }

    private func makeSession(recordingTo recorder: HARRecorder?) -> Session {
        let timeout = options.attemptTimeout
        let deadline = options.maximumTime
        let terminal = self.terminal
        let redirectLimit = options.maximumRedirects
        let trust = options.trust
        if trust.isInsecure {
            terminal.error(
                "courier: warning: --insecure: the server's certificate is not checked; anyone on the path "
                    + "can read and change this exchange\n"
            )
        }
        var monitors: [any EventMonitor] = []
        if options.retries > 0 { monitors.append(RetryReporter { terminal.error("courier: " + $0) }) }
        if let recorder { monitors.append(recorder) }
        let configuration = Session.Configuration {
            $0.timeoutInterval = timeout
            $0.requestDeadline = deadline
            $0.redirectLimit = redirectLimit
            // As httpie and curl: `courier GET url a=b` sends the body it was asked to.
            $0.allowsBodyInGETRequests = true
            $0.trustRoots = trust.trustRoots
            $0.clientCertificate = trust.clientCertificate
            $0.serverTrustManager = trust.manager
        }
        return Session(
            configuration: configuration,
            transport: options.transport.makeTransport(connectTimeout: options.connectTimeout),
            interceptor: retryPolicy,
            redirectHandler: options.followsRedirects ? nil : Redirector.doNotFollow,
            eventMonitors: monitors
        )
    }

    /// The URLRequest for a body held in memory (or none), with `extraHeaders` on top.
    ///
    /// The headers go in as one `allHTTPHeaderFields`, not through `setValue(_:forHTTPHeaderField:)`:
    /// FoundationNetworking's `setValue` silently drops a value holding CR or LF, which would
    /// send the request without, say, its `Authorization` and exit 0. Kept whole, an invalid
    /// header reaches the session's check and fails the request with `invalidHeader`, whose
    /// message names the header but never prints its value.
    func makeURLRequest(extraHeaders: HTTPHeaders = HTTPHeaders()) -> URLRequest {
        var request = URLRequest(url: options.plan.url, timeoutInterval: options.attemptTimeout)
        request.httpMethod = options.plan.method
        var headers = options.plan.headers
        for header in extraHeaders { headers.update(header) }
        if !headers.isEmpty { request.allHTTPHeaderFields = headers.dictionary }
        if case .data(let data) = options.plan.body { request.httpBody = data }
        return request
    }

    /// Lets through validation every status but one `--retry` is about to retry (see
    /// ``RetryValidation``), so the final answer is printed whole.
    func validatingForRetry<R: Request>(_ request: R) -> R {
        authenticating(request)
        guard let retryPolicy else { return request }
        return request.validate(statusCode: RetryValidation(request: request, policy: retryPolicy))
    }

    /// `request`, answering the server's challenge with `--auth` under `--auth-type digest`.
    @discardableResult
    func authenticating<R: Request>(_ request: R) -> R {
        guard let credential = options.plan.credential else { return request }
        return request.authenticate(username: credential.user, password: credential.password, persistence: .none)
    }

    /// `1 attempt`, `3 attempts`.
    static func attempts(_ count: Int) -> String {
        count == 1 ? "1 attempt" : "\(count) attempts"
    }

    /// What `--retry` did with a final answer of `status`, for stderr, or `nil` when there is
    /// nothing to say (no `--retry`, or a status it never retries).
    func retryNote(for request: Request, status: Int) -> String? {
        guard let policy = retryPolicy,
            policy.retryableHTTPStatusCodes.contains(status) || status == 429
        else { return nil }
        let made = Self.attempts(request.retryCount + 1)
        let answer = "HTTP \(status) \(HeadFormatter.reasonPhrase(for: status))"
        let method = HTTPMethod(rawValue: options.plan.method)
        if !policy.retryableHTTPMethods.contains(method), options.plan.headers["Idempotency-Key"] == nil {
            return "\(answer) was not retried: \(method.rawValue) is not idempotent, and --retry retries it only "
                + "with an Idempotency-Key header (\(made) made)"
        }
        if request.retryCount >= policy.retryLimit {
            return "gave up after \(made): the last answered \(answer)"
        }
        if status == 429, request.response?.value(forHTTPHeaderField: "Retry-After") == nil {
            return "\(answer) was not retried: it came without Retry-After (\(made) made)"
        }
        // The policy would have gone on: the retry budget or --max-time stopped it.
        return "gave up after \(made), before the retry limit (--max-time or the retry budget left no room): "
            + "the last answered \(answer)"
    }

    private func makeMultipartForm() -> MultipartFormData? {
        guard case .multipart(let parts) = options.plan.body else { return nil }
        let form = MultipartFormData()
        for part in parts {
            switch part {
            case .text(let name, let value): form.append(Data(value.utf8), withName: name)
            case .file(let name, let path): form.append(URL(fileURLWithPath: path), withName: name)
            }
        }
        return form
    }

    // MARK: - Streamed responses

    /// Sends a request whose body is in memory and writes the response as it arrives.
    private func stream(with session: Session) async -> Int32 {
        let request = validatingForRetry(session.streamRequest(makeURLRequest()))
        var printer = ResponsePrinter(selection: options.selection, terminal: terminal)
        var sawHead = false
        do {
            for try await piece in request.streamingData() {
                if !sawHead, let response = request.response {
                    sawHead = true
                    printer.head(response, protocolName: request.metrics?.networkProtocolName)
                }
                printer.body(piece)
            }
        } catch {
            return finish(request, error: error, printer: &printer, sawHead: sawHead)
        }
        return finish(request, error: nil, printer: &printer, sawHead: sawHead)
    }

    /// Sends a file or multipart upload and writes the response once it has all arrived.
    private func collect(_ request: UploadRequest) async -> Int32 {
        let task = validatingForRetry(request).serializingData(emptyResponseCodes: Set(100..<600))
        let response = await task.response
        var printer = ResponsePrinter(selection: options.selection, terminal: terminal)
        var sawHead = false
        if response.error == nil, let head = response.response {
            sawHead = true
            printer.head(head, protocolName: response.metrics?.networkProtocolName)
            printer.body(response.data ?? Data())
        }
        return finish(request, error: response.error, printer: &printer, sawHead: sawHead)
    }

    /// Ends the output and decides the exit code: `1` for a failure with no response, else
    /// `0` unless `--check-status` maps the status to 3, 4 or 5.
    private func finish(_ request: Request, error: (any Error)?, printer: inout ResponsePrinter, sawHead: Bool) -> Int32
    {
        if let error {
            let courierError = (error as? CourierError) ?? .transportFailed(URLError(.unknown))
            // A status `--retry` was retrying when something stopped it is still the server's answer.
            guard let status = courierError.responseCode, let response = request.response else {
                let retried = request.retryCount > 0 ? " (\(Self.attempts(request.retryCount + 1)) made)" : ""
                terminal.error(
                    terminal.errorStyle.paint("courier: error: ", .failure)
                        + describe(courierError)
                        + retried + "\n"
                )
                printTimings(request)
                return ExitStatus.failure
            }
            if !sawHead { printer.head(response, protocolName: request.metrics?.networkProtocolName) }
            printer.finish()
            let note =
                retryNote(for: request, status: status) ?? "gave up after \(Self.attempts(request.retryCount + 1))"
            terminal.error("courier: " + note + "\n")
        } else {
            if !sawHead, let response = request.response {
                printer.head(response, protocolName: request.metrics?.networkProtocolName)
            }
            printer.finish()
            if let status = request.response?.statusCode, let note = retryNote(for: request, status: status) {
                terminal.error("courier: " + note + "\n")
            }
        }
        printTimings(request)
        guard options.checksStatus, let status = request.response?.statusCode,
            let (code, message) = ExitStatus.checked(
                statusCode: status,
                reason: HeadFormatter.reasonPhrase(for: status),
                followsRedirects: options.followsRedirects
            )
        else { return ExitStatus.success }
        terminal.error(terminal.errorStyle.paint("courier: ", .failure) + message + "\n")
        return code
    }

    /// The one-line message for `error`.
    func describe(_ error: CourierError) -> String {
        let maximumTimePassed = options.maximumTime.flatMap { limit in
            ContinuousClock.now - start >= .milliseconds(Int64(limit * 1000)) ? limit : nil
        }
        return ErrorMessage.describe(
            error,
            url: options.plan.url,
            timeout: options.attemptTimeout,
            maximumTime: maximumTimePassed
        )
    }

    /// `--timings`: the table of every attempt's metrics, on stderr.
    func printTimings(_ request: Request) {
        guard options.showsTimings else { return }
        terminal.error(TimingsTable.render(request.allMetrics))
    }

    // MARK: - The request, printed

    /// The headers as they will be sent: the plan's, the session's defaults, and the length.
    private func displayedHeaders(form: MultipartFormData?) -> [(name: String, value: String)] {
        var headers = options.plan.headers
        if let form, headers["Content-Type"] == nil {
            headers.add(name: "Content-Type", value: form.contentType)
        }
        if options.downloads { headers.update(name: "Accept-Encoding", value: "identity") }
        for header in HTTPHeaders.default where headers[header.name] == nil {
            headers.add(header)
        }
        switch options.plan.body {
        case .none: break
        case .data(let data): headers.update(name: "Content-Length", value: "\(data.count)")
        case .file(let path):
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
            if let size { headers.update(name: "Content-Length", value: "\(size)") }
        case .multipart:
            if let form { headers.update(name: "Content-Length", value: "\(form.contentLength)") }
        }
        return headers.map { ($0.name, $0.value) }
    }

    private func printRequest(headers: [(name: String, value: String)], form: MultipartFormData?) {
        let selection = options.selection
        guard selection.contains(.requestHeaders) || selection.contains(.requestBody) else { return }
        let style = terminal.outputStyle
        if selection.contains(.requestHeaders) {
            terminal.output(
                HeadFormatter(style: style).requestHead(
                    method: options.plan.method,
                    url: options.plan.url,
                    headers: headers
                ) + "\n"
            )
        }
        if selection.contains(.requestBody) {
            switch options.plan.body {
            case .none: break
            case .data(let data):
                if terminal.stdoutIsTerminal {
                    let display = BodyDisplay.classify(
                        Array(data),
                        contentType: options.plan.headers["Content-Type"],
                        style: style
                    )
                    terminal.output(display.rendered(style: style) + "\n")
                } else {
                    terminal.output(bytes: data)
                    terminal.output("\n\n")
                }
            case .file(let path):
                terminal.output(style.paint("(the body is the file \(path))", .faint) + "\n\n")
            case .multipart(let parts):
                let names = parts.map { part -> String in
                    switch part {
                    case .text(let name, let value): return "\(name)=\(value)"
                    case .file(let name, let path): return "\(name)@\(path)"
                    }
                }
                let boundary = form.map { " (boundary \($0.boundary))" } ?? ""
                terminal.output(
                    style.paint("(multipart form\(boundary): \(names.joined(separator: ", ")))", .faint) + "\n\n"
                )
            }
        }
    }
}
