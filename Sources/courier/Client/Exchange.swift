import Courier
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

    /// The statuses `--retry` lets through validation; the others fail it, so that
    /// ``RetryPolicy`` (which only sees failures) can retry them.
    static let statusesAcceptedWhenRetrying: Set<Int> = Set(100..<600)
        .subtracting(RetryPolicy.defaultRetryableHTTPStatusCodes).subtracting([429])

    /// Runs the exchange.
    func run() async -> Int32 {
        let form = makeMultipartForm()
        let headers = displayedHeaders(form: form)
        printRequest(headers: headers, form: form)
        if options.isOffline { return ExitStatus.success }

        let session = makeSession()
        let code: Int32
        if options.downloads {
            code = await download(with: session)
        } else {
            switch options.plan.body {
            case .none, .data:
                code = await stream(with: session)
            case .file(let path):
                code = await collect(
                    session.upload(
                        URL(fileURLWithPath: path),
                        to: options.plan.url,
                        method: HTTPMethod(rawValue: options.plan.method),
                        headers: options.plan.headers
                    )
                )
            case .multipart:
                code = await collect(
                    session.upload(
                        multipartFormData: form ?? MultipartFormData(),
                        to: options.plan.url,
                        method: HTTPMethod(rawValue: options.plan.method),
                        headers: options.plan.headers
                    )
                )
            }
        }
        await session.invalidate()
        return code
    }

    // MARK: - Session and request

    private func makeSession() -> Session {
        let timeout = options.timeout ?? 60
        let terminal = self.terminal
        let configuration = Session.Configuration { $0.timeoutInterval = timeout }
        return Session(
            configuration: configuration,
            transport: options.transport.makeTransport(
                followsRedirects: options.followsRedirects,
                maximumRedirects: options.maximumRedirects
            ),
            interceptor: options.retries > 0 ? RetryPolicy(retryLimit: options.retries) : nil,
            eventMonitors: options.retries > 0 ? [RetryReporter { terminal.error("courier: " + $0) }] : []
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
        var request = URLRequest(url: options.plan.url, timeoutInterval: options.timeout ?? 60)
        request.httpMethod = options.plan.method
        var headers = options.plan.headers
        for header in extraHeaders { headers.update(header) }
        if !headers.isEmpty { request.allHTTPHeaderFields = headers.dictionary }
        if case .data(let data) = options.plan.body { request.httpBody = data }
        return request
    }

    /// Lets through validation every status but those `--retry` retries.
    func validatingForRetry<R: Request>(_ request: R) -> R {
        options.retries > 0 ? request.validate(statusCode: Self.statusesAcceptedWhenRetrying) : request
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
            // A status `--retry` kept retrying until it gave up is still the server's answer.
            guard courierError.responseCode != nil, let response = request.response else {
                terminal.error(
                    terminal.errorStyle.paint("courier: error: ", .failure)
                        + ErrorMessage.describe(courierError, url: options.plan.url, timeout: options.timeout) + "\n"
                )
                printTimings(request)
                return ExitStatus.failure
            }
            if !sawHead { printer.head(response, protocolName: request.metrics?.networkProtocolName) }
            terminal.error("courier: gave up after \(request.retryCount + 1) attempts\n")
        } else if !sawHead, let response = request.response {
            printer.head(response, protocolName: request.metrics?.networkProtocolName)
        }
        printer.finish()
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
